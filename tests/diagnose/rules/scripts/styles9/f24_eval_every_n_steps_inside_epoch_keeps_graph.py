"""Evaluation every `eval_interval` steps inside the epoch (not only at its end), counted by a
`global_step` that runs across epochs, as nanoGPT-like trainers do; the evaluation estimates the
loss over a few held-out batches and the best checkpoint is kept in memory. A small
character-level Transformer on generated text.

Planted: `estimate_loss()` calls `model.eval()` but is not under `torch.no_grad()` (nor
decorated), so every evaluation batch records an autograd graph it never uses.
--fixed: `@torch.no_grad()` on `estimate_loss`.
"""

import contextlib
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
VOCAB, BLOCK, EVAL_INTERVAL, EVAL_BATCHES = 40, 32, 25, 6


class CharModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, 96)
        self.pos = nn.Parameter(torch.zeros(BLOCK, 96))
        layer = nn.TransformerEncoderLayer(96, 4, 192, dropout=0.1, batch_first=True)
        self.body = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(96, VOCAB)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(BLOCK))

    def forward(self, idx):
        return self.head(self.body(self.tok(idx) + self.pos, mask=self.mask, is_causal=True))


def get_batch(data, g):
    ix = torch.randint(len(data) - BLOCK - 1, (32,), generator=g)
    x = torch.stack([data[i : i + BLOCK] for i in ix])
    return x, torch.stack([data[i + 1 : i + BLOCK + 1] for i in ix])


def estimate_loss(model, data, g):
    model.eval()
    with torch.no_grad() if FIXED else contextlib.nullcontext():
        losses = []
        for _ in range(EVAL_BATCHES):
            x, y = get_batch(data, g)
            losses.append(nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten()))
        mean = float(torch.stack(losses).mean())
    model.train()
    return mean


if __name__ == "__main__":
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    text = torch.randint(0, VOCAB, (60000,))
    text[1::3] = (text[::3][: len(text[1::3])] + 1) % VOCAB
    train, val = text[:54000], text[54000:]
    model = CharModel()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    global_step, best = 0, float("inf")
    for epoch in range(3):
        for _ in range(75):
            x, y = get_batch(train, g)
            loss = nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            global_step += 1
            if global_step % EVAL_INTERVAL == 0:
                val_loss = estimate_loss(model, val, g)
                best = min(best, val_loss)
        print("epoch", epoch, "best val", best)
