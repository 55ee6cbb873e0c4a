"""A loop with its own minimal tqdm-like progress bar (`Bar`, carriage-return redraws every 25
batches) and a running `metrics` dict; a 1-D conv net on audio-like waveforms (keyword spotting
on synthetic tones).

Planted: `metrics["loss"] += loss` adds the loss tensor itself, so the running sum keeps every
step's autograd graph alive until the epoch ends. --fixed: `+= loss.detach()`.
"""

import math
import sys
import time

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
SAMPLES, KEYWORDS = 4000, 6


class Bar:
    def __init__(self, total, every=25):
        self.total, self.every, self.n, self.t0 = total, every, 0, time.time()

    def update(self, metrics):
        self.n += 1
        if self.n % self.every == 0 or self.n == self.total:
            rate = self.n / max(time.time() - self.t0, 1e-9)
            shown = " ".join(f"{k}={float(v) / self.n:.3f}" for k, v in metrics.items())
            sys.stdout.write(f"\r{self.n}/{self.total} [{rate:.1f} it/s] {shown}")
            sys.stdout.flush()

    def close(self):
        sys.stdout.write("\n")


def synth(n, g):
    labels = torch.randint(0, KEYWORDS, (n,), generator=g)
    t = torch.arange(SAMPLES) / 8000
    freq = 300 + 150 * labels[:, None].float()
    wave = torch.sin(2 * math.pi * freq * t) + 0.3 * torch.randn(n, SAMPLES, generator=g)
    return wave[:, None], labels


class KWS(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(1, 16, 80, stride=16), nn.BatchNorm1d(16), nn.ReLU(), nn.MaxPool1d(4),
            nn.Conv1d(16, 32, 3), nn.BatchNorm1d(32), nn.ReLU(), nn.AdaptiveAvgPool1d(1),
            nn.Flatten(), nn.Linear(32, KEYWORDS),
        )

    def forward(self, x):
        return self.net(x)


if __name__ == "__main__":
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    waves, labels = synth(3200, g)
    model = KWS()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    for epoch in range(3):
        order = torch.randperm(len(labels), generator=g)
        batches = order.split(32)
        bar, metrics = Bar(len(batches)), {"loss": 0.0, "acc": 0.0}
        for idx in batches:
            logits = model(waves[idx])
            loss = nn.functional.cross_entropy(logits, labels[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            metrics["loss"] += loss.detach() if FIXED else loss
            metrics["acc"] += (logits.argmax(1) == labels[idx]).float().mean().item()
            bar.update(metrics)
        bar.close()
