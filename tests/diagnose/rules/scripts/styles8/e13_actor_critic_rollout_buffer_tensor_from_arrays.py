"""Advantage actor-critic (A2C) on a small NumPy environment written by the author (a point that
must reach a goal on a plane): a rollout buffer filled for 64 steps, GAE advantages, a shared
torso with policy and value heads, an entropy bonus.

Planted: the buffer keeps each observation as a NumPy array and `as_tensors()` builds the batch
with `torch.tensor(self.obs)` from the list of arrays at every update. --fixed:
`torch.from_numpy(np.stack(self.obs))`.
"""

import sys

import numpy as np
import torch
from torch import nn

FIXED = "--fixed" in sys.argv
N_ENVS, HORIZON, OBS = 32, 64, 16


class PointEnv:
    def __init__(self, n, seed=0):
        self.rng = np.random.default_rng(seed)
        self.n = n
        self.pos = self.rng.normal(size=(n, 2))
        self.goal = self.rng.normal(size=(n, 2))

    def observe(self):
        d = self.goal - self.pos
        feats = [
            self.pos,
            self.goal,
            d,
            np.abs(d),
            np.sin(self.pos),
            np.cos(self.pos),
            d**2,
            np.sign(d),
        ]
        return np.concatenate(feats, 1).astype(np.float32)

    def step(self, actions):
        moves = np.array([[0.1, 0], [-0.1, 0], [0, 0.1], [0, -0.1]])[actions]
        before = np.linalg.norm(self.goal - self.pos, axis=1)
        self.pos += moves
        after = np.linalg.norm(self.goal - self.pos, axis=1)
        done = after < 0.1
        self.goal[done] = self.rng.normal(size=(int(done.sum()), 2))
        return self.observe(), (before - after).astype(np.float32), done


class RolloutBuffer:
    def __init__(self):
        self.obs, self.actions, self.rewards, self.dones = [], [], [], []

    def add(self, obs, action, reward, done):
        for i in range(len(obs)):
            self.obs.append(obs[i])
        self.actions.append(action)
        self.rewards.append(reward)
        self.dones.append(done)

    def as_tensors(self):
        obs = torch.from_numpy(np.stack(self.obs)) if FIXED else torch.tensor(self.obs)
        return obs, torch.cat(self.actions), np.stack(self.rewards), np.stack(self.dones)


if __name__ == "__main__":
    torch.manual_seed(0)
    env = PointEnv(N_ENVS)
    torso = nn.Sequential(nn.Linear(OBS, 64), nn.Tanh())
    policy, value = nn.Linear(64, 4), nn.Linear(64, 1)
    params = [*torso.parameters(), *policy.parameters(), *value.parameters()]
    opt = torch.optim.Adam(params, lr=3e-4)
    obs = env.observe()
    for update in range(60):
        buffer = RolloutBuffer()
        with torch.no_grad():
            for _ in range(HORIZON):
                dist = torch.distributions.Categorical(logits=policy(torso(torch.from_numpy(obs))))
                action = dist.sample()
                next_obs, reward, done = env.step(action.numpy())
                buffer.add(obs, action, reward, done)
                obs = next_obs
        states, actions, rewards, dones = buffer.as_tensors()
        hidden = torso(states)
        values = value(hidden).squeeze(1).view(HORIZON, N_ENVS)
        returns, running = np.zeros_like(rewards), np.zeros(N_ENVS, np.float32)
        for t in reversed(range(HORIZON)):
            running = rewards[t] + 0.99 * running * (1 - dones[t])
            returns[t] = running
        advantages = torch.from_numpy(returns) - values.detach()
        dist = torch.distributions.Categorical(logits=policy(hidden))
        logp = dist.log_prob(actions).view(HORIZON, N_ENVS)
        loss = (
            -(logp * advantages).mean()
            + 0.5 * (torch.from_numpy(returns) - values).pow(2).mean()
            - 0.01 * dist.entropy().mean()
        )
        opt.zero_grad()
        loss.backward()
        opt.step()
        if update % 20 == 0:
            print(update, float(rewards.mean()))
