"""An autoencoder trained with two optimizers, one for the encoder and one for the decoder (the
decoder with a smaller learning rate and no weight decay), each stepped every batch. Both are
deep, narrow residual MLP stacks: many small parameter tensors.

Planted: both optimizers are built with `foreach=False` (kept from a debugging session), so
Adam updates each of the ~100 parameter tensors in its own Python-level loop of small kernels.
--fixed: `foreach=True` (on a CPU the default, `foreach=None`, is the per-tensor loop too).
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm, self.fc = nn.LayerNorm(width), nn.Linear(width, width)

    def forward(self, x):
        return x + self.fc(torch.relu(self.norm(x)))


def stack(width, depth):
    return nn.Sequential(*[Block(width) for _ in range(depth)])


if __name__ == "__main__":
    torch.manual_seed(0)
    encoder = nn.Sequential(nn.Linear(32, 48), stack(48, 12), nn.Linear(48, 8))
    decoder = nn.Sequential(nn.Linear(8, 48), stack(48, 12), nn.Linear(48, 32))
    extra = {"foreach": FIXED}
    enc_opt = torch.optim.AdamW(encoder.parameters(), lr=1e-3, weight_decay=1e-2, **extra)
    dec_opt = torch.optim.Adam(decoder.parameters(), lr=3e-4, **extra)
    x = torch.randn(8192, 32)
    for epoch in range(3):
        for idx in torch.randperm(len(x)).split(256):
            recon = decoder(encoder(x[idx]))
            loss = nn.functional.mse_loss(recon, x[idx])
            enc_opt.zero_grad()
            dec_opt.zero_grad()
            loss.backward()
            enc_opt.step()
            dec_opt.step()
        print("epoch", epoch, float(loss))
