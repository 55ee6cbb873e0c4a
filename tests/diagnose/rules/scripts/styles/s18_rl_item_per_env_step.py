"""REINFORCE on a pure-Python corridor environment; .item() on the reward tensor every env step.

Planted: running_return += reward_t.item() on every environment step. --fixed: summed as a tensor.
"""

import random
import sys

import torch
from torch import nn


class Corridor:
    def __init__(self, length=8):
        self.length = length

    def reset(self):
        self.pos = 0
        return self._obs()

    def _obs(self):
        obs = torch.zeros(self.length)
        obs[self.pos] = 1.0
        return obs

    def step(self, action):
        self.pos = max(0, min(self.length - 1, self.pos + (1 if action == 1 else -1)))
        done = self.pos == self.length - 1
        return self._obs(), (1.0 if done else -0.01), done


def main():
    eager = "--fixed" not in sys.argv
    random.seed(0)
    torch.manual_seed(0)
    env = Corridor()
    policy = nn.Sequential(nn.Linear(8, 64), nn.Tanh(), nn.Linear(64, 2))
    opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
    for episode in range(300):
        obs, logps, rewards = env.reset(), [], []
        running_return = 0.0 if eager else torch.zeros(())
        for _ in range(32):
            dist = torch.distributions.Categorical(logits=policy(obs))
            action = dist.sample()
            obs, reward, done = env.step(int(action))
            reward_t = torch.tensor(reward)
            logps.append(dist.log_prob(action))
            rewards.append(reward_t)
            running_return += reward_t.item() if eager else reward_t
            if done:
                break
        returns = torch.stack(rewards).flip(0).cumsum(0).flip(0)
        loss = -(torch.stack(logps) * (returns - returns.mean())).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if episode % 100 == 0:
            print(episode, float(running_return))


if __name__ == "__main__":
    main()
