"""An off-policy value learner: transitions go into a replay buffer (a deque), and every step
samples a minibatch from it with random.sample; the minibatch size is 4, from a tutorial that
trained on a single CartPole-like state.

Planted: batch size 4 (every step is per-op overhead). --fixed: batch size 256.
"""

import random
import sys
from collections import deque

import torch
from torch import nn


def main():
    random.seed(0)
    torch.manual_seed(0)
    batch = 256 if "--fixed" in sys.argv else 4
    q = nn.Sequential(nn.Linear(8, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                      nn.Linear(256, 4))
    opt = torch.optim.Adam(q.parameters(), lr=1e-3)
    states = torch.randn(20000, 8)
    actions = torch.randint(0, 4, (20000,))
    rewards = states[:, 0] * (actions == 1)
    buffer = deque(zip(states, actions, rewards), maxlen=20000)
    for step in range(100000 // batch):
        s, a, r = map(torch.stack, zip(*random.sample(buffer, batch)))
        pred = q(s).gather(1, a[:, None]).squeeze(1)
        loss = nn.functional.smooth_l1_loss(pred, r)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 1000 == 0:
            print(step, loss.item())


if __name__ == "__main__":
    main()
