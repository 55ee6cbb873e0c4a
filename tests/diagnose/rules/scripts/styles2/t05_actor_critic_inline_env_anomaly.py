"""Advantage actor-critic on an inline point-mass environment (no gym); anomaly detection was
switched on while chasing a NaN and never switched off.

Planted: torch.autograd.set_detect_anomaly(True) at start-up. --fixed: not set.
"""

import math
import random
import sys

import torch
from torch import nn

if "--fixed" not in sys.argv:
    torch.autograd.set_detect_anomaly(True)


class PointMass:
    """Push a point towards the origin; 4 discrete actions."""

    def reset(self):
        self.pos = [random.uniform(-1, 1), random.uniform(-1, 1)]
        self.t = 0
        return list(self.pos)

    def step(self, action):
        dx, dy = [(0.1, 0), (-0.1, 0), (0, 0.1), (0, -0.1)][action]
        self.pos[0] += dx
        self.pos[1] += dy
        self.t += 1
        dist = math.hypot(*self.pos)
        return list(self.pos), -dist, dist < 0.1 or self.t >= 32


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(2, 256), nn.Tanh(), nn.Linear(256, 256), nn.Tanh())
        self.pi = nn.Linear(256, 4)
        self.v = nn.Linear(256, 1)

    def forward(self, obs):
        h = self.trunk(obs)
        return self.pi(h), self.v(h).squeeze(-1)


def rollout(env, net, horizon=64):
    obs_list, act_list, rew_list = [], [], []
    obs = env.reset()
    with torch.no_grad():
        for _ in range(horizon):
            logits, _ = net(torch.tensor(obs))
            action = int(torch.distributions.Categorical(logits=logits).sample())
            nxt, reward, done = env.step(action)
            obs_list.append(obs)
            act_list.append(action)
            rew_list.append(reward)
            obs = env.reset() if done else nxt
    return torch.tensor(obs_list), torch.tensor(act_list), torch.tensor(rew_list)


def main():
    random.seed(0)
    torch.manual_seed(0)
    env, net = PointMass(), ActorCritic()
    opt = torch.optim.RMSprop(net.parameters(), lr=7e-4, foreach=True)
    for update in range(150):
        obs, actions, rewards = rollout(env, net)
        returns = torch.flip(torch.cumsum(torch.flip(rewards, [0]), 0), [0])
        logits, values = net(obs)
        logp = torch.log_softmax(logits, -1).gather(1, actions[:, None]).squeeze(1)
        advantage = returns - values
        loss = -(logp * advantage.detach()).mean() + 0.5 * advantage.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if update % 50 == 0:
            print(f"update {update}: return {rewards.sum().item():.2f}")


if __name__ == "__main__":
    main()
