"""CLEAN: PPO with vectorized toy environments, GAE computed with tensor ops per step of the
rollout, 4 update epochs over minibatches of 64, gradient clipping, an annealed learning rate.
Nothing is planted (`--fixed` changes nothing).
"""

import torch
from torch import nn

N_ENVS, T, OBS, ACT = 16, 64, 10, 3


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(OBS, 128), nn.Tanh(), nn.Linear(128, 128), nn.Tanh())
        self.pi, self.v = nn.Linear(128, ACT), nn.Linear(128, 1)

    def forward(self, obs):
        h = self.body(obs)
        return torch.distributions.Categorical(logits=self.pi(h)), self.v(h).squeeze(-1)


def main():
    torch.manual_seed(0)
    agent = Agent()
    opt = torch.optim.Adam(agent.parameters(), lr=3e-4, eps=1e-5)
    iterations = 20
    for it in range(iterations):
        opt.param_groups[0]["lr"] = 3e-4 * (1 - it / iterations)
        obs = torch.randn(T, N_ENVS, OBS)
        with torch.no_grad():
            dist, values = agent(obs)
            actions = dist.sample()
            logp = dist.log_prob(actions)
        rewards = (actions == obs[..., :ACT].argmax(-1)).float()
        adv, last = torch.zeros(T, N_ENVS), torch.zeros(N_ENVS)
        for t in reversed(range(T)):
            nxt = values[t + 1] if t + 1 < T else torch.zeros(N_ENVS)
            last = rewards[t] + 0.99 * nxt - values[t] + 0.99 * 0.95 * last
            adv[t] = last
        ret = adv + values
        b_obs, b_act, b_logp = obs.flatten(0, 1), actions.flatten(), logp.flatten()
        b_adv, b_ret = adv.flatten(), ret.flatten()
        for _ in range(4):
            for idx in torch.randperm(T * N_ENVS).split(64):
                dist, v = agent(b_obs[idx])
                ratio = (dist.log_prob(b_act[idx]) - b_logp[idx]).exp()
                a = (b_adv[idx] - b_adv[idx].mean()) / (b_adv[idx].std() + 1e-8)
                pg = -torch.min(ratio * a, ratio.clamp(0.8, 1.2) * a).mean()
                loss = pg + 0.5 * (v - b_ret[idx]).pow(2).mean() - 0.01 * dist.entropy().mean()
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                opt.step()
        if it % 5 == 0:
            print(it, rewards.mean().item())


if __name__ == "__main__":
    main()
