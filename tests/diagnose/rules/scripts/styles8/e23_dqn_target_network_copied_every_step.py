"""Deep Q-learning on a NumPy grid world written by the author: an epsilon-greedy policy with a
decaying epsilon, a replay deque of transitions sampled in mini-batches, a Huber loss against a
target network, and the target network "synced" with the online one.

Planted: `sync_target()` is called after every gradient step and rebuilds the target network
with `copy.deepcopy(online)` each time (meant: every 500 steps, or a soft update in place).
--fixed: the target is built once and its weights refreshed with `load_state_dict` every 500
steps.
"""

import copy
import random
import sys
from collections import deque

import numpy as np
import torch
from torch import nn

FIXED = "--fixed" in sys.argv
SIZE = 8


class GridWorld:
    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.reset()

    def reset(self):
        self.pos = self.rng.integers(0, SIZE, 2)
        return self.obs()

    def obs(self):
        grid = np.zeros((SIZE, SIZE), np.float32)
        grid[tuple(self.pos)] = 1.0
        return grid.ravel()

    def step(self, action):
        self.pos = np.clip(self.pos + [(0, 1), (0, -1), (1, 0), (-1, 0)][action], 0, SIZE - 1)
        done = bool((self.pos == SIZE - 1).all())
        return self.obs(), (1.0 if done else -0.01), done


if __name__ == "__main__":
    torch.manual_seed(0)
    random.seed(0)
    env = GridWorld()
    online = nn.Sequential(
        nn.Linear(SIZE * SIZE, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 4)
    )
    target = copy.deepcopy(online)
    opt = torch.optim.Adam(online.parameters(), lr=1e-3)
    replay = deque(maxlen=10000)
    obs, eps = env.reset(), 1.0
    for step in range(3000):
        if random.random() < eps:
            action = random.randrange(4)
        else:
            with torch.no_grad():
                action = int(online(torch.from_numpy(obs)).argmax())
        next_obs, reward, done = env.step(action)
        replay.append((obs, action, reward, next_obs, done))
        obs = env.reset() if done else next_obs
        eps = max(0.05, eps * 0.999)
        if len(replay) < 256:
            continue
        batch = random.sample(replay, 64)
        s, a, r, s2, d = (np.array(col) for col in zip(*batch))
        s, s2 = torch.from_numpy(s), torch.from_numpy(s2)
        with torch.no_grad():
            y = torch.from_numpy(r).float() + 0.99 * target(s2).max(1).values * (
                1 - torch.from_numpy(d).float()
            )
        q = online(s).gather(1, torch.from_numpy(a)[:, None]).squeeze(1)
        loss = nn.functional.smooth_l1_loss(q, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if FIXED:
            if step % 500 == 0:
                target.load_state_dict(online.state_dict())
        else:
            target = copy.deepcopy(online)
        if step % 1000 == 0:
            print(step, loss.item(), eps)
