"""An `IterableDataset` that streams training examples synthesised on the fly (a physics-like
simulator: damped oscillators integrated with small Euler steps, noise added), as a data stream
with no fixed length; a 1-D conv net regresses the damping from the trajectory. Training stops
after a fixed number of steps per "epoch" of the stream.

Planted: the stream is read with `num_workers=0`, so every trajectory is integrated in the
training process between steps. --fixed: two workers (each seeded differently) and prefetching.
"""

import math
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

FIXED = "--fixed" in sys.argv
LENGTH = 128


class OscillatorStream(IterableDataset):
    def __iter__(self):
        info = get_worker_info()
        g = torch.Generator().manual_seed(1000 + (info.id if info else 0))
        while True:
            damping = torch.rand(1, generator=g).item() * 0.5
            freq = 1 + 3 * torch.rand(1, generator=g).item()
            x, v, dt, out = 1.0, 0.0, 0.05, []
            for _ in range(LENGTH):
                for _ in range(8):
                    a = -(2 * math.pi * freq) ** 2 * x - damping * v
                    v += a * dt / 8
                    x += v * dt / 8
                out.append(x)
            traj = torch.tensor(out) + 0.01 * torch.randn(LENGTH, generator=g)
            yield traj.unsqueeze(0), torch.tensor([damping])


if __name__ == "__main__":
    torch.manual_seed(0)
    loader = DataLoader(OscillatorStream(), batch_size=32, num_workers=2 if FIXED else 0,
                        persistent_workers=FIXED)
    model = nn.Sequential(nn.Conv1d(1, 16, 5, stride=2), nn.ReLU(), nn.Conv1d(16, 32, 5, stride=2),
                          nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(32, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    stream = iter(loader)
    for epoch in range(3):
        for _ in range(40):
            traj, damping = next(stream)
            loss = nn.functional.mse_loss(model(traj), damping)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
