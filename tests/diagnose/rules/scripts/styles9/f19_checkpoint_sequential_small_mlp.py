"""Activation checkpointing through `torch.utils.checkpoint.checkpoint_sequential`, applied in
the model's forward to a deep stack of residual-free MLP blocks, "to save memory" as a recipe
for large models suggests; a denoising regression on generated signals. The model is a few MB
and its activations at batch 128 are far below the machine's memory.

Planted: `checkpoint_sequential(self.blocks, 4, x)` in training, so every block's forward runs
twice per step. --fixed: `self.blocks(x)`.
"""

import sys

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint_sequential

FIXED = "--fixed" in sys.argv


class Denoiser(nn.Module):
    def __init__(self, dim=128, depth=8):
        super().__init__()
        self.blocks = nn.Sequential(*[nn.Sequential(nn.Linear(dim, dim), nn.GELU())
                                      for _ in range(depth)])
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        if self.training and not FIXED:
            x = checkpoint_sequential(self.blocks, 4, x, use_reentrant=False)
        else:
            x = self.blocks(x)
        return self.out(x)


if __name__ == "__main__":
    torch.manual_seed(0)
    t = torch.linspace(0, 6.28, 128)
    clean = torch.sin(t[None] * torch.rand(6000, 1) * 4 + torch.rand(6000, 1) * 6.28)
    noisy = clean + 0.3 * torch.randn_like(clean)
    model = Denoiser()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        perm = torch.randperm(len(clean))
        for start in range(0, len(clean), 128):
            idx = perm[start : start + 128]
            loss = nn.functional.mse_loss(model(noisy[idx]), clean[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
