"""A dataclass config drives a text-classification loop; the running loss is a Python float.

Planted: `running += loss.item()` and `correct += (...).sum().item()` every step (host syncs in the
step). --fixed: the sums stay tensors and are read once per epoch.
"""

import sys
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class Config:
    vocab: int = 5000
    dim: int = 128
    classes: int = 4
    seq_len: int = 48
    batch: int = 64
    epochs: int = 3
    lr: float = 2e-3
    fixed: bool = False


class BagOfEmbeddings(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.emb = nn.Embedding(cfg.vocab, cfg.dim)
        self.mlp = nn.Sequential(nn.Linear(cfg.dim, 256), nn.GELU(), nn.Linear(256, cfg.classes))

    def forward(self, tokens):
        return self.mlp(self.emb(tokens).mean(1))


def make_data(cfg: Config, n: int):
    g = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, cfg.vocab, (n, cfg.seq_len), generator=g)
    labels = tokens[:, 0] % cfg.classes
    return tokens, labels


def train(cfg: Config):
    tokens, labels = make_data(cfg, 4096)
    model = BagOfEmbeddings(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, foreach=True)
    for epoch in range(cfg.epochs):
        running = torch.zeros(()) if cfg.fixed else 0.0
        correct = torch.zeros((), dtype=torch.long) if cfg.fixed else 0
        for i in range(0, len(tokens), cfg.batch):
            xb, yb = tokens[i:i + cfg.batch], labels[i:i + cfg.batch]
            logits = model(xb)
            loss = nn.functional.cross_entropy(logits, yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if cfg.fixed:
                running += loss.detach()
                correct += (logits.argmax(1) == yb).sum()
            else:
                running += loss.item()
                correct += (logits.argmax(1) == yb).sum().item()
        print(f"epoch {epoch}: loss {float(running):.3f} acc {int(correct) / len(tokens):.3f}")


if __name__ == "__main__":
    train(Config(fixed="--fixed" in sys.argv))
