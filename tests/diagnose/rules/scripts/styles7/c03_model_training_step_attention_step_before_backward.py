"""The training step is a method of the model (`model.training_step(batch)` returns the loss, a
`configure_optimizers()` method builds the optimizer), Lightning-style without Lightning; a
small self-attention classifier over token sequences.

Planted: the driver calls `opt.step()` before `loss.backward()` (the author moved the
scheduler/step block up when adding logging), so each step runs on gradients that were just
cleared. --fixed: backward, then step.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
VOCAB, SEQ, DIM = 500, 32, 64


class AttentionClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.pos = nn.Parameter(torch.zeros(SEQ, DIM))
        self.attn = nn.MultiheadAttention(DIM, 4, batch_first=True)
        self.norm = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, 2)

    def forward(self, tokens):
        h = self.embed(tokens) + self.pos
        a, _ = self.attn(h, h, h, need_weights=False)
        return self.head(self.norm(h + a).mean(1))

    def training_step(self, batch):
        tokens, labels = batch
        return nn.functional.cross_entropy(self(tokens), labels)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def make_batches(n_batches, batch_size, g):
    for _ in range(n_batches):
        tokens = torch.randint(0, VOCAB, (batch_size, SEQ), generator=g)
        labels = (tokens[:, :4].sum(1) % 2).long()
        yield tokens, labels


def fit(model, epochs=3):
    opt = model.configure_optimizers()
    g = torch.Generator().manual_seed(0)
    for epoch in range(epochs):
        total = 0.0
        for batch in make_batches(150, 64, g):
            opt.zero_grad()
            loss = model.training_step(batch)
            if FIXED:
                loss.backward()
                opt.step()
            else:
                opt.step()
                loss.backward()
            total += loss.detach()
        print(f"epoch {epoch} loss {float(total) / 150:.4f}")


if __name__ == "__main__":
    torch.manual_seed(0)
    fit(AttentionClassifier())
