"""Text classifier (EmbeddingBag + Dropout); validation runs under no_grad but never calls eval().

Planted: no model.eval() before validation. --fixed: text_model.eval() / .train() around it.
"""

import sys

import torch
from torch import nn


class BagOfWords(nn.Module):
    def __init__(self, vocab, dim, classes):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.drop = nn.Dropout(0.5)
        self.head = nn.Linear(dim, classes)

    def forward(self, tokens, offsets):
        return self.head(self.drop(self.embed(tokens, offsets)))


def batches(docs, labels, size):
    for i in range(0, len(docs), size):
        chunk = docs[i:i + size]
        offsets = torch.tensor([0] + [len(d) for d in chunk[:-1]]).cumsum(0)
        yield torch.cat(chunk), offsets, labels[i:i + size]


def main(fixed):
    torch.manual_seed(0)
    vocab = 5000
    docs = [torch.randint(0, vocab, (int(n),)) for n in torch.randint(20, 60, (2400,))]
    labels = torch.tensor([int(d[0]) % 4 for d in docs])
    text_model = BagOfWords(vocab, 64, 4)
    optim = torch.optim.Adam(text_model.parameters(), lr=1e-3, foreach=True)
    train_docs, val_docs = docs[:1920], docs[1920:]
    for epoch in range(8):
        if fixed:
            text_model.train()
        for tokens, offsets, y in batches(train_docs, labels[:1920], 64):
            optim.zero_grad()
            nn.functional.cross_entropy(text_model(tokens, offsets), y).backward()
            optim.step()
        if fixed:
            text_model.eval()
        with torch.no_grad():
            correct = sum(int((text_model(t, o).argmax(1) == y).sum())
                          for t, o, y in batches(val_docs, labels[1920:], 120))
        print(f"epoch {epoch} acc {correct / len(val_docs):.3f}")


if __name__ == "__main__":
    main("--fixed" in sys.argv)
