"""A hydra-like nested config object (attribute access all the way down, built from a dict of
dicts) drives a text-classifier trainer. The trainer validates every `val_check_interval` steps;
the config file the author copied had it at 1 (meant for a debug run).

Planted: the whole validation set is evaluated after every training step. --fixed: once per
epoch (val_check_interval = steps per epoch).
"""

import sys
from types import SimpleNamespace

import torch
from torch import nn


def to_namespace(tree):
    if isinstance(tree, dict):
        return SimpleNamespace(**{k: to_namespace(v) for k, v in tree.items()})
    return tree


CONFIG = to_namespace({
    "data": {"vocab": 2000, "seq_len": 48, "train_size": 4096, "val_size": 1024, "batch": 64},
    "model": {"dim": 96, "classes": 4},
    "trainer": {"epochs": 2, "val_check_interval": 1, "lr": 3e-4},
})
if "--fixed" in sys.argv:
    CONFIG.trainer.val_check_interval = CONFIG.data.train_size // CONFIG.data.batch


class BagOfEmbeddings(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.emb = nn.Embedding(cfg.data.vocab, cfg.model.dim)
        self.head = nn.Sequential(nn.Linear(cfg.model.dim, cfg.model.dim), nn.ReLU(),
                                  nn.Linear(cfg.model.dim, cfg.model.classes))

    def forward(self, tokens):
        return self.head(self.emb(tokens).mean(1))


def make_split(cfg, n):
    tokens = torch.randint(0, cfg.data.vocab, (n, cfg.data.seq_len))
    return tokens, tokens[:, 0] % cfg.model.classes


@torch.no_grad()
def validate(model, split, cfg):
    model.eval()
    tokens, labels = split
    correct = 0
    for i in range(0, len(tokens), cfg.data.batch):
        logits = model(tokens[i:i + cfg.data.batch])
        correct += (logits.argmax(-1) == labels[i:i + cfg.data.batch]).sum()
    model.train()
    return correct / len(tokens)


def run(cfg):
    torch.manual_seed(0)
    train, val = make_split(cfg, cfg.data.train_size), make_split(cfg, cfg.data.val_size)
    model = BagOfEmbeddings(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.trainer.lr)
    step, acc = 0, torch.tensor(0.0)
    for epoch in range(cfg.trainer.epochs):
        for i in range(0, cfg.data.train_size, cfg.data.batch):
            loss = nn.functional.cross_entropy(model(train[0][i:i + cfg.data.batch]),
                                               train[1][i:i + cfg.data.batch])
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step % cfg.trainer.val_check_interval == 0:
                acc = validate(model, val, cfg)
        print(f"epoch {epoch} val acc {float(acc):.3f}")


if __name__ == "__main__":
    run(CONFIG)
