"""A step-based loop that evaluates "N times per epoch": `eval_every = max(1, steps_per_epoch //
cfg.evals_per_epoch)`, the validation pass covering a fixed validation set of 2048 samples. A
text-like bag-of-embeddings classifier.

Planted: `evals_per_epoch` is 1000 (meant as "every 1000 steps" by whoever set it), larger than
the 94 steps of an epoch, so `eval_every` is 1 and the whole validation set is scored after
every training step. --fixed: `evals_per_epoch = 1`.
"""

import sys
from dataclasses import dataclass

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


@dataclass
class Cfg:
    evals_per_epoch: int = 1 if FIXED else 1000
    batch: int = 64
    epochs: int = 3


class BagClassifier(nn.Module):
    def __init__(self, vocab=5000, dim=64):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, dim)
        self.head = nn.Sequential(nn.Linear(dim, 128), nn.ReLU(), nn.Linear(128, 2))

    def forward(self, tokens):
        return self.head(self.emb(tokens))


@torch.no_grad()
def evaluate(model, val_tokens, val_y):
    model.eval()
    acc = (model(val_tokens).argmax(1) == val_y).float().mean()
    model.train()
    return float(acc)


if __name__ == "__main__":
    torch.manual_seed(0)
    cfg = Cfg()
    tokens = torch.randint(0, 5000, (8000, 48))
    labels = ((tokens < 2500).float().mean(1) > 0.5).long()
    train_t, train_y, val_t, val_y = tokens[:6000], labels[:6000], tokens[6000:], labels[6000:]
    model = BagClassifier()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    steps_per_epoch = len(train_t) // cfg.batch
    eval_every = max(1, steps_per_epoch // cfg.evals_per_epoch)
    step = 0
    for epoch in range(cfg.epochs):
        for idx in torch.randperm(len(train_t)).split(cfg.batch):
            loss = nn.functional.cross_entropy(model(train_t[idx]), train_y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step % eval_every == 0:
                acc = evaluate(model, val_t, val_y)
        print("epoch", epoch, float(loss), acc)
