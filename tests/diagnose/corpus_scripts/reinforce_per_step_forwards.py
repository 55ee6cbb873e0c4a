"""REINFORCE in the classic tutorial style: the policy runs with autograd on for every
environment step, one observation per call, and the episode's loss is built at its end."""

import random

import torch
from inline_env import Pole
from torch import nn


def main():
    torch.manual_seed(0)
    random.seed(0)
    env = Pole()
    policy = nn.Sequential(nn.Linear(4, 64), nn.ReLU(), nn.Linear(64, 2), nn.Softmax(dim=-1))
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
    for _episode in range(40):
        obs, log_probs, rewards = env.reset(), [], []
        for _t in range(32):
            probs = policy(torch.tensor(obs, dtype=torch.float32).unsqueeze(0))
            dist = torch.distributions.Categorical(probs)
            action = dist.sample()
            log_probs.append(dist.log_prob(action))
            obs, reward, done = env.step(action.item())
            rewards.append(reward)
            if done:
                obs = env.reset()
        returns, running = [], 0.0
        for reward in reversed(rewards):
            running = reward + 0.99 * running
            returns.insert(0, running)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + 1e-6)
        loss = torch.cat([-lp * r for lp, r in zip(log_probs, returns)]).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
