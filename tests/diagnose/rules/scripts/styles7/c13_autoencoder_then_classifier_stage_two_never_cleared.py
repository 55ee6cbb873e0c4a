"""A two-stage pipeline: stage 1 pretrains a denoising autoencoder on unlabelled vectors, stage 2
freezes the encoder and fits a classifier head on the small labelled set. Each stage has its own
function, optimizer and loop.

Planted: stage 2's loop has no `zero_grad()` (stage 1's does; the author wrote stage 2 later from
memory), so the head's gradients pile up over every fine-tuning step. --fixed: stage 2 clears
them each step.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
DIM, CODE = 128, 32


def pretrain(encoder, decoder, x, epochs=2):
    opt = torch.optim.Adam([*encoder.parameters(), *decoder.parameters()], lr=1e-3)
    for epoch in range(epochs):
        for idx in torch.randperm(len(x)).split(256):
            clean = x[idx]
            noisy = clean + 0.2 * torch.randn_like(clean)
            loss = nn.functional.mse_loss(decoder(encoder(noisy)), clean)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("stage 1 epoch", epoch, round(loss.item(), 4))


def finetune(encoder, head, x, y, epochs=20):
    for p in encoder.parameters():
        p.requires_grad_(False)
    opt = torch.optim.SGD(head.parameters(), lr=0.01, momentum=0.9)
    for epoch in range(epochs):
        for idx in torch.randperm(len(x)).split(64):
            with torch.no_grad():
                code = encoder(x[idx])
            loss = nn.functional.cross_entropy(head(code), y[idx])
            if FIXED:
                opt.zero_grad()
            loss.backward()
            opt.step()
        if epoch % 5 == 0:
            print("stage 2 epoch", epoch, round(loss.item(), 4))


if __name__ == "__main__":
    torch.manual_seed(0)
    unlabelled = torch.randn(20000, DIM)
    labelled = torch.randn(3000, DIM)
    labels = (labelled[:, :3].sum(1) > 0).long()
    encoder = nn.Sequential(nn.Linear(DIM, 256), nn.ReLU(), nn.Linear(256, CODE))
    decoder = nn.Sequential(nn.Linear(CODE, 256), nn.ReLU(), nn.Linear(256, DIM))
    pretrain(encoder, decoder, unlabelled)
    head = nn.Sequential(nn.Linear(CODE, 64), nn.ReLU(), nn.Linear(64, 2))
    finetune(encoder, head, labelled, labels)
