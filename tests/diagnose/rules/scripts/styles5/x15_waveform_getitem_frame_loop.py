"""A speech-like keyword classifier: a 1-D conv net over synthetic waveforms. The Dataset's
`__getitem__` synthesises a 1-second clip and computes log frame energies with a Python loop
over 25 ms frames (the author's port of a NumPy feature script), one small tensor op per frame.

Planted: ~100 small ops per sample in __getitem__, in the training process. --fixed: frames
with `unfold` and one log-energy op per clip.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv
RATE, WIN, HOP = 8000, 200, 80


class KeywordClips(Dataset):
    def __init__(self, n=2048):
        g = torch.Generator().manual_seed(0)
        self.labels = torch.randint(0, 6, (n,), generator=g)
        self.phase = torch.rand(n, generator=g)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        t = torch.arange(RATE) / RATE
        freq = 200.0 + 150.0 * self.labels[i]
        wave = torch.sin(2 * torch.pi * freq * t + self.phase[i]) + 0.1 * torch.randn(RATE)
        if FIXED:
            frames = wave.unfold(0, WIN, HOP)
            feats = torch.log(frames.pow(2).mean(1) + 1e-6)
        else:
            feats = []
            for start in range(0, RATE - WIN + 1, HOP):
                frame = wave[start:start + WIN]
                feats.append(torch.log(frame.pow(2).mean() + 1e-6))
            feats = torch.stack(feats)
        return torch.stack([feats, wave[::80][: feats.shape[0]]]), self.labels[i]


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv1d(2, 32, 5, padding=2), nn.ReLU(), nn.Conv1d(32, 32, 5, padding=2),
                          nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(32, 6))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = DataLoader(KeywordClips(), batch_size=32, shuffle=True)
    for epoch in range(2):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
