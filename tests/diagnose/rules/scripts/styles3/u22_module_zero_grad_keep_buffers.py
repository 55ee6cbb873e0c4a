"""A research loop for a bag-of-words text classifier that clears gradients through the module
(`model.zero_grad(set_to_none=False)`) "to keep the gradient buffers allocated"; the model's
60,000-word embedding table gets a dense gradient that is filled with zeros every step.

Planted: every gradient is filled with zeros each step. --fixed: model.zero_grad() (set to
None).
"""

import sys

import torch
from torch import nn

VOCAB = 60_000


class BagOfWords(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.EmbeddingBag(VOCAB, 64, mode="mean")
        self.head = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 2))

    def forward(self, ids):
        return self.head(self.embed(ids))


def main():
    torch.manual_seed(0)
    model = BagOfWords()
    opt = torch.optim.SGD(model.parameters(), lr=0.5, foreach=True)
    keep_buffers = "--fixed" not in sys.argv
    ids = torch.randint(0, VOCAB, (8192, 40))
    labels = (ids[:, 0] % 2).long()
    for epoch in range(3):
        for xb, yb in zip(ids.split(64), labels.split(64)):
            model.zero_grad(set_to_none=not keep_buffers)
            loss = nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
