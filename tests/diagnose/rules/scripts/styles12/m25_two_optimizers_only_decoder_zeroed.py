"""A sequence autoencoder with separate optimizers for the encoder (SGD with momentum) and the
decoder (Adam), stepped together every batch from one reconstruction loss, in a helper
`update(losses, optimizers)`.

Planted: the helper zeroes only the optimizer it was written for first (`optimizers[-1]`, the
decoder's); the encoder's gradients are never cleared and grow with every step, so the encoder
moves along the running sum of all past gradients. --fixed: every optimizer is zeroed.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def update(loss, optimizers):
    if FIXED:
        for opt in optimizers:
            opt.zero_grad()
    else:
        optimizers[-1].zero_grad()
    loss.backward()
    for opt in optimizers:
        opt.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(3000, 20, 8)
    encoder = nn.GRU(8, 32, batch_first=True)
    decoder = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 20 * 8))
    enc_opt = torch.optim.SGD(encoder.parameters(), lr=0.01, momentum=0.9)
    dec_opt = torch.optim.Adam(decoder.parameters(), lr=1e-3)
    for epoch in range(3):
        for idx in torch.randperm(len(x)).split(64):
            code = encoder(x[idx])[1][-1]
            loss = nn.functional.mse_loss(decoder(code).view(-1, 20, 8), x[idx])
            update(loss, [enc_opt, dec_opt])
        print("epoch", epoch, float(loss))
