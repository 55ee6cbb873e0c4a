"""Quantization-aware training, hand written: a `FakeQuantLinear` module rounds its weight to 8
bits with a straight-through estimator in every forward. A small MLP classifier.

Planted: the per-output-channel scale is applied channel by channel in a Python loop
(`for c in range(out_features)`), hundreds of tiny ops per layer per step, forward and
backward. --fixed: the same fake quantization vectorised over channels (one broadcast).
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class FakeQuantLinear(nn.Linear):
    def quantized_weight(self):
        w = self.weight
        if FIXED:
            scale = w.abs().amax(1, keepdim=True).clamp_min(1e-8) / 127
            q = (w / scale).round().clamp(-127, 127) * scale
            return w + (q - w).detach()
        rows = []
        for c in range(w.shape[0]):
            scale = w[c].abs().max().clamp_min(1e-8) / 127
            q = (w[c] / scale).round().clamp(-127, 127) * scale
            rows.append(w[c] + (q - w[c]).detach())
        return torch.stack(rows)

    def forward(self, x):
        return nn.functional.linear(x, self.quantized_weight(), self.bias)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(6000, 64)
    y = (x[:, :3].sum(1) > 0).long()
    model = nn.Sequential(
        FakeQuantLinear(64, 128),
        nn.ReLU(),
        FakeQuantLinear(128, 128),
        nn.ReLU(),
        FakeQuantLinear(128, 2),
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(3):
        for idx in torch.randperm(len(x)).split(128):
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
