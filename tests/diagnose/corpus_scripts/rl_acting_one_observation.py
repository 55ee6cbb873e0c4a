"""An actor-critic loop on an inline pole-balancing environment: one observation per action."""

import random

import torch
from inline_env import Pole
from torch import nn


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh())
        self.pi = nn.Linear(64, 2)
        self.v = nn.Linear(64, 1)

    def forward(self, obs):
        h = self.body(obs)
        return self.pi(h), self.v(h).squeeze(-1)


def main():
    torch.manual_seed(0)
    random.seed(0)
    env, agent = Pole(), ActorCritic()
    optimizer = torch.optim.Adam(agent.parameters(), lr=3e-4)
    obs = env.reset()
    horizon = 64
    for _update in range(30):
        observations, actions, rewards, dones = [], [], [], []
        for _ in range(horizon):
            with torch.no_grad():  # acting: one observation, one action
                logits, _ = agent(torch.tensor(obs, dtype=torch.float32).unsqueeze(0))
                action = torch.distributions.Categorical(logits=logits).sample().item()
            observations.append(obs)
            actions.append(action)
            obs, reward, done = env.step(action)
            rewards.append(reward)
            dones.append(done)
            if done:
                obs = env.reset()
        returns, running = [], 0.0
        for reward, done in zip(reversed(rewards), reversed(dones)):
            running = reward + 0.99 * running * (0.0 if done else 1.0)
            returns.append(running)
        returns = torch.tensor(returns[::-1])
        logits, values = agent(torch.tensor(observations, dtype=torch.float32))
        dist = torch.distributions.Categorical(logits=logits)
        advantage = returns - values.detach()
        log_prob = dist.log_prob(torch.tensor(actions))
        loss = -(log_prob * advantage).mean() + 0.5 * (returns - values).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
