"""Closures passed to a generic `run_epoch(step_fn, batches)`: `make_step(model, opt)` returns
the step; a 3-layer character LSTM language model with separate per-layer modules (an embedding,
three LSTMs with LayerNorms between them, a tied decoder), on a synthetic corpus.

Planted: the optimizer is `torch.optim.AdamW(..., foreach=False)` ("reproducible across
versions" in a comment), so its update runs tensor by tensor. --fixed: the default (foreach).
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
VOCAB, DIM, SEQ = 64, 48, 32


class CharLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, DIM)
        self.rnns = nn.ModuleList(nn.LSTM(DIM, DIM, batch_first=True) for _ in range(3))
        self.norms = nn.ModuleList(nn.LayerNorm(DIM) for _ in range(3))
        self.proj = nn.ModuleList(nn.Linear(DIM, DIM) for _ in range(6))
        self.bias = nn.Parameter(torch.zeros(VOCAB))

    def forward(self, x):
        h = self.emb(x)
        for rnn, norm in zip(self.rnns, self.norms):
            h = norm(h + rnn(h)[0])
        for p in self.proj:
            h = h + torch.tanh(p(h))
        return h @ self.emb.weight.T + self.bias


def make_step(model, opt):
    def step(x, y):
        loss = nn.functional.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach()

    return step


def run_epoch(step_fn, batches):
    return torch.stack([step_fn(x, y) for x, y in batches]).mean().item()


if __name__ == "__main__":
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    corpus = torch.randint(0, VOCAB, (40000,), generator=g)
    model = CharLM()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, foreach=None if FIXED else False)
    step = make_step(model, opt)
    for epoch in range(3):
        starts = torch.randint(0, len(corpus) - SEQ - 1, (2400,), generator=g)
        idx = starts[:, None] + torch.arange(SEQ + 1)
        seqs = corpus[idx]
        batches = list(zip(seqs[:, :-1].split(16), seqs[:, 1:].split(16)))
        print(epoch, run_epoch(step, batches))
