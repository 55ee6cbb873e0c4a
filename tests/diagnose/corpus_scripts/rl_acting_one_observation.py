"""An actor-critic loop on an inline pole-balancing environment: one observation per action."""

import math
import random

import torch
from torch import nn


class Pole:
    """A cart-pole in pure Python (the classic equations, Euler steps)."""

    def reset(self):
        self.state = [random.uniform(-0.05, 0.05) for _ in range(4)]
        return list(self.state)

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = 10.0 if action == 1 else -10.0
        cos, sin = math.cos(theta), math.sin(theta)
        temp = (force + 0.05 * theta_dot**2 * sin) / 1.1
        theta_acc = (9.8 * sin - cos * temp) / (0.5 * (4.0 / 3.0 - 0.1 * cos**2 / 1.1))
        x_acc = temp - 0.05 * theta_acc * cos / 1.1
        x, x_dot = x + 0.02 * x_dot, x_dot + 0.02 * x_acc
        theta, theta_dot = theta + 0.02 * theta_dot, theta_dot + 0.02 * theta_acc
        self.state = [x, x_dot, theta, theta_dot]
        done = abs(x) > 2.4 or abs(theta) > 0.21
        return list(self.state), 1.0, done


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
