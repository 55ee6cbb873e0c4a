"""A keyword-spotting model on generated 1-second waveforms: the model frames the waveform
itself (25 ms windows, 10 ms hop), applies a learned filterbank per frame and pools.

Planted: `forward` builds the frames with a Python loop over frame positions
(`x[:, i * hop : i * hop + win]` for ~100 positions), multiplying each by the window and
projecting it: hundreds of tiny ops per step, forward and backward. --fixed: `x.unfold(1, win,
hop)` frames the whole batch in one op.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
RATE, WIN, HOP = 4000, 100, 40


class FrameNet(nn.Module):
    def __init__(self, bands=24, classes=6):
        super().__init__()
        self.register_buffer("window", torch.hann_window(WIN))
        self.filters = nn.Linear(WIN, bands)
        self.head = nn.Sequential(nn.Linear(bands, 32), nn.ReLU(), nn.Linear(32, classes))

    def forward(self, x):
        if FIXED:
            frames = x.unfold(1, WIN, HOP) * self.window
            energy = self.filters(frames).abs().log1p()
        else:
            count = (x.shape[1] - WIN) // HOP + 1
            energy = torch.stack(
                [
                    self.filters(x[:, i * HOP : i * HOP + WIN] * self.window).abs().log1p()
                    for i in range(count)
                ],
                1,
            )
        return self.head(energy.mean(1))


if __name__ == "__main__":
    torch.manual_seed(0)
    t = torch.arange(RATE) / RATE
    labels = torch.randint(0, 6, (1024,))
    waves = torch.sin(2 * torch.pi * (200 + 100 * labels[:, None]) * t) + 0.3 * torch.randn(
        1024, RATE
    )
    model = FrameNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        for idx in torch.randperm(len(waves)).split(32):
            loss = nn.functional.cross_entropy(model(waves[idx]), labels[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
