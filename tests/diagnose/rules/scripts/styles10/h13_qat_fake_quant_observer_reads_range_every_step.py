"""Quantization-aware training written by hand: every Linear is wrapped by a `QATLinear` that
fake-quantizes its weight and its input to int8 (`torch.fake_quantize_per_tensor_affine`) with
a min/max observer that keeps running ranges. A small MLP classifier on generated data.

Planted: the observer turns its running min/max into Python floats (`.item()`) on every
forward, to compute the scale and zero point as numbers: two host reads per layer per step.
--fixed: the observer keeps the range as tensors and uses the tensor-argument overload of
`fake_quantize_per_tensor_affine`.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class MinMaxObserver(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("lo", torch.tensor(0.0))
        self.register_buffer("hi", torch.tensor(0.0))

    def forward(self, x):
        with torch.no_grad():
            self.lo.copy_(torch.minimum(self.lo * 0.9 + x.min() * 0.1, self.lo))
            self.hi.copy_(torch.maximum(self.hi * 0.9 + x.max() * 0.1, self.hi))
        if FIXED:
            scale = ((self.hi - self.lo) / 255).clamp_min(1e-8).detach()
            zero = (-128 - self.lo / scale).round().clamp(-128, 127).int().detach()
            return torch.fake_quantize_per_tensor_affine(x, scale, zero, -128, 127)
        lo, hi = self.lo.item(), self.hi.item()
        scale = max((hi - lo) / 255, 1e-8)
        zero = int(min(max(round(-128 - lo / scale), -128), 127))
        return torch.fake_quantize_per_tensor_affine(x, scale, zero, -128, 127)


class QATLinear(nn.Module):
    def __init__(self, linear):
        super().__init__()
        self.linear, self.w_obs, self.x_obs = linear, MinMaxObserver(), MinMaxObserver()

    def forward(self, x):
        return nn.functional.linear(self.x_obs(x), self.w_obs(self.linear.weight),
                                    self.linear.bias)


def prepare_qat(model):
    for name, child in model.named_children():
        if isinstance(child, nn.Linear):
            setattr(model, name, QATLinear(child))
        else:
            prepare_qat(child)
    return model


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(8192, 64)
    y = (x[:, :4].sum(1) > 0).long()
    model = prepare_qat(nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256),
                                      nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                                      nn.Linear(128, 2)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(3):
        perm = torch.randperm(len(x))
        for start in range(0, len(x), 64):
            idx = perm[start : start + 64]
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
