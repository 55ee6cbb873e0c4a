"""A training step written as a context manager: `with optimizer_step(opt, clip=1.0):` wraps
the forward and backward, and the context manager does the bookkeeping on exit (clip, step,
clear), so the loop body holds only the model code. A small MLP-Mixer-like model on generated
token grids.

Planted: the context manager's exit clears the gradients BEFORE stepping
(`opt.zero_grad(); opt.step()`): every step applies zero gradients (Adam moves nothing after
its state decays; the model never learns). --fixed: `opt.step()` then `opt.zero_grad()`.
"""

import contextlib
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


@contextlib.contextmanager
def optimizer_step(opt, params, clip):
    yield
    nn.utils.clip_grad_norm_(params, clip)
    if FIXED:
        opt.step()
        opt.zero_grad(set_to_none=True)
    else:
        opt.zero_grad(set_to_none=True)
        opt.step()


class MixerBlock(nn.Module):
    def __init__(self, tokens, dim):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.token_mlp = nn.Sequential(nn.Linear(tokens, 64), nn.GELU(), nn.Linear(64, tokens))
        self.chan_mlp = nn.Sequential(nn.Linear(dim, 256), nn.GELU(), nn.Linear(256, dim))

    def forward(self, x):
        x = x + self.token_mlp(self.n1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.chan_mlp(self.n2(x))


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(4096, 16, 64)
    y = (x[:, 0, :4].sum(1) > 0).long()
    model = nn.Sequential(MixerBlock(16, 64), MixerBlock(16, 64), nn.Flatten(),
                          nn.Linear(16 * 64, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        for start in range(0, len(x), 64):
            with optimizer_step(opt, model.parameters(), clip=1.0):
                loss = nn.functional.cross_entropy(model(x[start : start + 64]),
                                                   y[start : start + 64])
                loss.backward()
        print("epoch", epoch, loss.item())
