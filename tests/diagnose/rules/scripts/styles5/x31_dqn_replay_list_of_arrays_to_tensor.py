"""A DQN agent with its replay memory kept as a deque of NumPy transitions (the way many
tutorials write it). `ReplayMemory.sample()` draws a minibatch with `random.sample` and builds
each field with `torch.tensor([t.state for t in batch])`: torch.tensor on a list of NumPy arrays.

Planted: torch.tensor on lists of NumPy arrays for every update (the slow element-by-element
path). --fixed: np.stack first, then torch.from_numpy.
"""

import random
import sys
from collections import deque, namedtuple

import numpy as np
import torch
from torch import nn

FIXED = "--fixed" in sys.argv
Transition = namedtuple("Transition", "state action reward next_state done")
OBS, ACTIONS = 64, 4


class ReplayMemory:
    def __init__(self, capacity):
        self.memory = deque(maxlen=capacity)

    def push(self, *args):
        self.memory.append(Transition(*args))

    def sample(self, n):
        batch = random.sample(self.memory, n)
        if FIXED:
            def field(name, dtype):
                return torch.from_numpy(np.stack([getattr(t, name) for t in batch]).astype(dtype))
        else:
            def field(name, dtype):
                return torch.tensor([getattr(t, name) for t in batch], dtype=getattr(torch, dtype))
        return (field("state", "float32"), field("action", "int64"), field("reward", "float32"),
                field("next_state", "float32"), field("done", "float32"))


def main():
    random.seed(0)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    q = nn.Sequential(nn.Linear(OBS, 128), nn.ReLU(), nn.Linear(128, ACTIONS))
    target = nn.Sequential(nn.Linear(OBS, 128), nn.ReLU(), nn.Linear(128, ACTIONS))
    target.load_state_dict(q.state_dict())
    opt = torch.optim.Adam(q.parameters(), lr=1e-3)
    memory = ReplayMemory(20000)
    state = rng.normal(size=OBS).astype(np.float32)
    for step in range(1200):
        action = int(rng.integers(ACTIONS))
        nxt = (state * 0.9 + rng.normal(size=OBS) * 0.1).astype(np.float32)
        memory.push(state, np.int64(action), np.float32(state[action]), nxt, np.float32(0.0))
        state = nxt
        if len(memory.memory) < 256:
            continue
        s, a, r, s2, d = memory.sample(256)
        with torch.no_grad():
            y = r + 0.99 * (1 - d) * target(s2).max(1).values
        loss = nn.functional.smooth_l1_loss(q(s).gather(1, a[:, None]).squeeze(1), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 250 == 0:
            target.load_state_dict(q.state_dict())
            print(step, loss.item())


if __name__ == "__main__":
    main()
