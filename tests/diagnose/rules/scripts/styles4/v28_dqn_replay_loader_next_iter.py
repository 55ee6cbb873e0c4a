"""DQN where the replay buffer is a torch Dataset over a ring of tensors and each update draws a
minibatch with `next(iter(DataLoader(buffer, batch_size=64, shuffle=True, num_workers=1)))`:
a new loader iterator, with a worker process, for every gradient step.

Planted: a new DataLoader iterator (and worker) per batch. --fixed: minibatches drawn by indexing
the buffer's tensors with torch.randint.
"""

import random
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

OBS, ACTIONS, CAP = 8, 3, 4096


class Replay(Dataset):
    def __init__(self):
        self.s = torch.zeros(CAP, OBS)
        self.a = torch.zeros(CAP, dtype=torch.long)
        self.r = torch.zeros(CAP)
        self.s2 = torch.zeros(CAP, OBS)
        self.n = 0

    def add(self, s, a, r, s2):
        i = self.n % CAP
        self.s[i], self.a[i], self.r[i], self.s2[i] = s, a, r, s2
        self.n += 1

    def __len__(self):
        return min(self.n, CAP)

    def __getitem__(self, i):
        return self.s[i], self.a[i], self.r[i], self.s2[i]

    def sample(self, batch_size, fixed):
        if fixed:
            idx = torch.randint(0, len(self), (batch_size,))
            return self.s[idx], self.a[idx], self.r[idx], self.s2[idx]
        loader = DataLoader(self, batch_size=batch_size, shuffle=True, num_workers=1)
        return next(iter(loader))


def main():
    random.seed(0)
    torch.manual_seed(0)
    fixed = "--fixed" in sys.argv
    q = nn.Sequential(nn.Linear(OBS, 128), nn.ReLU(), nn.Linear(128, ACTIONS))
    target = nn.Sequential(nn.Linear(OBS, 128), nn.ReLU(), nn.Linear(128, ACTIONS))
    target.load_state_dict(q.state_dict())
    opt = torch.optim.Adam(q.parameters(), lr=1e-3)
    buf = Replay()
    s = torch.randn(OBS)
    for step in range(400):
        a = random.randrange(ACTIONS)
        s2 = torch.randn(OBS)
        buf.add(s, a, float(s[a]), s2)
        s = s2
        if len(buf) < 256:
            continue
        bs, ba, br, bs2 = buf.sample(64, fixed)
        with torch.no_grad():
            y = br + 0.9 * target(bs2).max(1).values
        loss = nn.functional.mse_loss(q(bs).gather(1, ba[:, None]).squeeze(1), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            target.load_state_dict(q.state_dict())
    print("done", loss.item())


if __name__ == "__main__":
    main()
