"""Advantage actor-critic with GAE on a NumPy toy environment (a point mass pushed toward a
goal). The environment returns float64 NumPy observations; the author hit "expected scalar type
Double but found Float" and fixed it by calling `.double()` on the agent.

Planted: the whole agent (and every update) runs in float64. --fixed: observations converted
with `torch.as_tensor(obs, dtype=torch.float32)`, agent left float32.
"""

import sys

import numpy as np
import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class PointEnv:
    def __init__(self, n_envs=32, seed=0):
        self.rng = np.random.default_rng(seed)
        self.n = n_envs
        self.pos = self.rng.normal(size=(n_envs, 2))

    def observe(self):
        return np.concatenate([self.pos, np.sin(self.pos), np.cos(self.pos)], axis=1)

    def step(self, action):
        moves = np.array([[1, 0], [-1, 0], [0, 1], [0, -1]], dtype=np.float64) * 0.1
        self.pos = self.pos + moves[action]
        reward = -np.linalg.norm(self.pos, axis=1)
        done = reward > -0.1
        self.pos[done] = self.rng.normal(size=(int(done.sum()), 2))
        return self.observe(), reward, done


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 256), nn.Tanh(), nn.Linear(256, 256), nn.Tanh())
        self.actor, self.critic = nn.Linear(256, 4), nn.Linear(256, 1)

    def forward(self, obs):
        h = self.body(obs)
        return torch.distributions.Categorical(logits=self.actor(h)), self.critic(h).squeeze(-1)


def gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    adv, running = torch.zeros_like(rewards), torch.zeros_like(last_value)
    for t in reversed(range(len(rewards))):
        nxt = last_value if t == len(rewards) - 1 else values[t + 1]
        delta = rewards[t] + gamma * nxt * (1 - dones[t]) - values[t]
        running = delta + gamma * lam * (1 - dones[t]) * running
        adv[t] = running
    return adv


def to_tensor(a):
    return torch.as_tensor(a, dtype=torch.float32) if FIXED else torch.from_numpy(a)


def main():
    torch.manual_seed(0)
    env, agent = PointEnv(), Agent()
    if not FIXED:
        agent = agent.double()
    opt = torch.optim.RMSprop(agent.parameters(), lr=7e-4)
    obs = to_tensor(env.observe())
    for update in range(60):
        logps, values, rewards, dones, entropies = [], [], [], [], []
        for _ in range(16):
            dist, value = agent(obs)
            action = dist.sample()
            o, r, d = env.step(action.numpy())
            logps.append(dist.log_prob(action))
            values.append(value)
            entropies.append(dist.entropy())
            rewards.append(to_tensor(r))
            dones.append(to_tensor(d.astype(np.float64)))
            obs = to_tensor(o)
        with torch.no_grad():
            _, last_value = agent(obs)
        values = torch.stack(values)
        adv = gae(torch.stack(rewards), values.detach(), torch.stack(dones), last_value)
        loss = (-(torch.stack(logps) * adv).mean() + 0.5 * (adv + values.detach() - values)
                .pow(2).mean() - 0.01 * torch.stack(entropies).mean())
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
        opt.step()
        if update % 20 == 0:
            print(update, float(torch.stack(rewards).mean()))


if __name__ == "__main__":
    main()
