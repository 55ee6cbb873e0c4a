"""Helpers of e05_two_files_sibling_utils_getitem_spectrogram.py (imported from the same folder):
the dataset and the model live here, the training loop in the script."""

import math

import torch
from torch import nn
from torch.utils.data import Dataset


class ClipDataset(Dataset):
    """Synthetic one-second clips turned into log-magnitude frames on access."""

    def __init__(self, n, fast, frame=64, hop=32, length=2048):
        g = torch.Generator().manual_seed(1)
        self.waves = torch.randn(n, length, generator=g)
        self.labels = torch.randint(0, 4, (n,), generator=g)
        self.fast, self.frame, self.hop = fast, frame, hop
        self.window = torch.hann_window(frame)

    def __len__(self):
        return len(self.waves)

    def __getitem__(self, i):
        wave = self.waves[i]
        if self.fast:
            frames = wave.unfold(0, self.frame, self.hop) * self.window
        else:
            rows = []
            for start in range(0, len(wave) - self.frame + 1, self.hop):
                chunk = wave[start : start + self.frame]
                rows.append(
                    [
                        float(v) * (0.5 - 0.5 * math.cos(2 * math.pi * k / self.frame))
                        for k, v in enumerate(chunk)
                    ]
                )
            frames = torch.tensor(rows)
        spec = torch.fft.rfft(frames).abs().add(1e-6).log()
        return spec.T.contiguous(), self.labels[i]


class SpecNet(nn.Module):
    def __init__(self, bins=33, classes=4):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv1d(bins, 64, 3, padding=1), nn.ReLU(), nn.Conv1d(64, 64, 3, padding=1), nn.ReLU()
        )
        self.head = nn.Linear(64, classes)

    def forward(self, spec):
        return self.head(self.conv(spec).mean(-1))
