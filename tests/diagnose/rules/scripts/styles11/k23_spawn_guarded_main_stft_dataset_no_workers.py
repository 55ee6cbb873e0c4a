"""An audio classifier whose `Dataset` synthesises a waveform (a few tones plus noise) and turns
it into a log-magnitude spectrogram with `torch.stft` in `__getitem__`. The script is written for
multiprocessing: everything under `if __name__ == "__main__":` with `mp.set_start_method("spawn")`
and a `main()`.

Planted: despite the guard, the DataLoader has `num_workers=0` (the worker count is taken from
an environment variable that defaults to "0"): the spectrograms are computed in the training
process between steps. --fixed: one persistent worker (the spare core of this machine).
"""

import multiprocessing as mp
import os
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


class ToneDataset(Dataset):
    def __init__(self, n, seconds=1.0, rate=8000):
        self.n, self.t = n, torch.arange(int(seconds * rate)) / rate
        self.window = torch.hann_window(256)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        label = i % 6
        freqs = 200.0 * (label + 1) * torch.tensor([1.0, 2.0, 3.0])
        wave = torch.sin(2 * torch.pi * freqs[:, None] * self.t).sum(0)
        wave = wave + 0.5 * torch.randn(len(self.t), generator=g)
        for shift in range(0, 8):  # a little reverb: delayed copies
            wave = wave + 0.1 * torch.roll(wave, 40 * shift)
        spec = torch.stft(wave, 256, 64, window=self.window, return_complex=True).abs()
        return torch.log1p(spec)[None], label


def main():
    torch.manual_seed(0)
    workers = 1 if FIXED else int(os.environ.get("NUM_WORKERS", "0"))
    loader = DataLoader(ToneDataset(2000), batch_size=32, shuffle=True, num_workers=workers,
                        persistent_workers=workers > 0)
    model = nn.Sequential(nn.Conv2d(1, 16, 3, stride=2, padding=1), nn.ReLU(),
                          nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 6))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        for spec, label in loader:
            loss = nn.functional.cross_entropy(model(spec), label)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))


if __name__ == "__main__":
    mp.set_start_method("spawn", force=True)
    main()
