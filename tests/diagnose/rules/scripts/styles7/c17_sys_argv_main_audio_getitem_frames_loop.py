"""A script whose `main(argv)` parses `sys.argv` by hand into a dict of defaults
(`--epochs=3 --batch=32` style); a 1-D conv classifier on audio-like clips whose Dataset turns
each raw clip into log-energy frames in `__getitem__`.

Planted: `__getitem__` frames the clip in a Python loop (one slice, window multiply and sum of
squares per 16-sample hop, 250 frames per clip). --fixed: the frames come from one `unfold`.
"""

import sys

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

DEFAULTS = {"epochs": 3, "batch": 32, "lr": 1e-3, "fixed": False}
WIN, HOP = 64, 16


def parse(argv):
    opts = dict(DEFAULTS)
    for arg in argv:
        key, _, value = arg.lstrip("-").partition("=")
        opts[key] = type(DEFAULTS[key])(value) if value else True
    return opts


class Clips(Dataset):
    def __init__(self, n, fixed):
        rng = np.random.default_rng(0)
        self.labels = rng.integers(0, 4, n)
        t = np.arange(4000) / 4000
        self.clips = (np.sin(2 * np.pi * (5 + 10 * self.labels[:, None]) * t)
                      + 0.5 * rng.normal(size=(n, 4000))).astype(np.float32)
        self.window = np.hanning(WIN).astype(np.float32)
        self.fixed = fixed

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        clip = torch.from_numpy(self.clips[i])
        if self.fixed:
            frames = clip.unfold(0, WIN, HOP) * torch.from_numpy(self.window)
            energy = (frames**2).sum(1)
        else:
            energy = []
            for start in range(0, len(clip) - WIN + 1, HOP):
                frame = self.clips[i][start : start + WIN] * self.window
                energy.append(float((frame**2).sum()))
            energy = torch.tensor(energy)
        return torch.log1p(energy)[None], int(self.labels[i])


def main(argv):
    opts = parse(argv)
    loader = DataLoader(Clips(2000, opts["fixed"]), batch_size=opts["batch"], shuffle=True)
    model = nn.Sequential(
        nn.Conv1d(1, 16, 5, padding=2), nn.ReLU(), nn.MaxPool1d(2),
        nn.Conv1d(16, 32, 5, padding=2), nn.ReLU(), nn.AdaptiveMaxPool1d(1),
        nn.Flatten(), nn.Linear(32, 4),
    )
    opt = torch.optim.Adam(model.parameters(), lr=opts["lr"])
    for epoch in range(opts["epochs"]):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    torch.manual_seed(0)
    main(sys.argv[1:])
