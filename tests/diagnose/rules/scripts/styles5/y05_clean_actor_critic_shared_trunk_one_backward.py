"""CLEAN: actor-critic with a shared trunk and GAE on a tensor environment; actor, critic and
entropy terms summed into one loss and one backward; float32 throughout; clipping. Nothing is
planted (`--fixed` changes nothing).
"""

import torch
from torch import nn


class Agent(nn.Module):
    def __init__(self, obs=6, actions=4):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(obs, 128), nn.Tanh(), nn.Linear(128, 128), nn.Tanh())
        self.actor, self.critic = nn.Linear(128, actions), nn.Linear(128, 1)

    def forward(self, obs):
        h = self.trunk(obs)
        return torch.distributions.Categorical(logits=self.actor(h)), self.critic(h).squeeze(-1)


def main():
    torch.manual_seed(0)
    agent = Agent()
    opt = torch.optim.Adam(agent.parameters(), lr=7e-4)
    pos = torch.randn(32, 2)
    moves = torch.tensor([[1.0, 0], [-1, 0], [0, 1], [0, -1]]) * 0.1
    for update in range(80):
        logps, values, rewards, ents = [], [], [], []
        for _ in range(16):
            dist, value = agent(torch.cat([pos, pos.sin(), pos.cos()], 1))
            action = dist.sample()
            pos = pos + moves[action]
            rewards.append(-pos.norm(dim=1))
            logps.append(dist.log_prob(action))
            values.append(value)
            ents.append(dist.entropy())
        values, rewards = torch.stack(values), torch.stack(rewards)
        adv, running = torch.zeros_like(rewards), torch.zeros(32)
        v = values.detach()
        for t in reversed(range(16)):
            nxt = v[t + 1] if t < 15 else v[t]
            running = rewards[t] + 0.99 * nxt - v[t] + 0.99 * 0.95 * running
            adv[t] = running
        loss = (-(torch.stack(logps) * adv).mean() + 0.5 * (adv + v - values).pow(2).mean()
                - 0.01 * torch.stack(ents).mean())
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
        opt.step()
        if update % 20 == 0:
            print(update, float(rewards.mean()))


if __name__ == "__main__":
    main()
