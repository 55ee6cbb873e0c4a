"""An MLP-Mixer-style model on patch tokens, configured with a `use_checkpointing` flag that the
author turned on for a big GPU run and kept for this small CPU one; the blocks go through
torch.utils.checkpoint.checkpoint_sequential.

Planted: activation checkpointing with memory to spare (every block recomputed in backward).
--fixed: the blocks run plainly.
"""

import argparse

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint_sequential


class MixerBlock(nn.Module):
    def __init__(self, tokens, dim):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.token_mlp = nn.Sequential(nn.Linear(tokens, 2 * tokens), nn.GELU(),
                                       nn.Linear(2 * tokens, tokens))
        self.channel_mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(),
                                         nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.token_mlp(self.norm1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channel_mlp(self.norm2(x))


class Mixer(nn.Module):
    def __init__(self, tokens=16, dim=96, depth=4, classes=10, use_checkpointing=False):
        super().__init__()
        self.embed = nn.Linear(48, dim)
        self.blocks = nn.Sequential(*[MixerBlock(tokens, dim) for _ in range(depth)])
        self.head = nn.Linear(dim, classes)
        self.use_checkpointing = use_checkpointing

    def forward(self, patches):
        x = self.embed(patches)
        if self.use_checkpointing and self.training:
            x = checkpoint_sequential(self.blocks, 2, x, use_reentrant=False)
        else:
            x = self.blocks(x)
        return self.head(x.mean(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixed", action="store_true")
    ap.add_argument("--epochs", type=int, default=2)
    args = ap.parse_args()
    torch.manual_seed(0)
    patches = torch.randn(4096, 16, 48)
    labels = torch.randint(0, 10, (4096,))
    model = Mixer(use_checkpointing=not args.fixed)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    for epoch in range(args.epochs):
        model.train()
        for xb, yb in zip(patches.split(128), labels.split(128)):
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"epoch {epoch}: {loss.item():.3f}")


if __name__ == "__main__":
    main()
