"""A seq2seq GRU (encoder-decoder) trained with scheduled sampling on a generated
sequence-reversal task: at each decoder position the input is either the ground-truth previous
token (teacher forcing) or the model's own previous prediction, chosen by a coin flip with a
probability that decays over training.

Planted: the coin flips are drawn in Python for every (sequence, position) pair,
`[[random.random() < p for _ in range(T)] for _ in range(B)]`, then turned into a tensor: a
list comprehension of B*T Python calls per step. --fixed: `torch.rand(B, T) < p`.
"""

import random
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
V, T, B = 40, 24, 128


class Seq2Seq(nn.Module):
    def __init__(self, dim=128):
        super().__init__()
        self.emb = nn.Embedding(V, dim)
        self.enc = nn.GRU(dim, dim, batch_first=True)
        self.dec = nn.GRU(dim, dim, batch_first=True)
        self.out = nn.Linear(dim, V)

    def forward(self, src, tgt_in, use_truth):
        _, h = self.enc(self.emb(src))
        with torch.no_grad():  # the model's own guesses for the sampled positions
            guess_out, _ = self.dec(self.emb(tgt_in), h)
            guess = self.out(guess_out).argmax(-1)
        dec_in = torch.where(use_truth, tgt_in, guess)
        out, _ = self.dec(self.emb(dec_in), h)
        return self.out(out)


def coin_flips(p):
    if FIXED:
        return torch.rand(B, T) < p
    return torch.tensor([[random.random() < p for _ in range(T)] for _ in range(B)])


if __name__ == "__main__":
    torch.manual_seed(0)
    random.seed(0)
    model = Seq2Seq()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    for step in range(300):
        src = torch.randint(1, V, (B, T))
        tgt = src.flip(1)
        tgt_in = torch.cat([torch.zeros(B, 1, dtype=torch.long), tgt[:, :-1]], 1)
        p = max(0.5, 1.0 - step / 600)
        logits = model(src, tgt_in, coin_flips(p))
        loss = nn.functional.cross_entropy(logits.reshape(-1, V), tgt.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(step, float(loss))
