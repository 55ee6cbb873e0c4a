"""A Keras-like wrapper: `KerasModel(module).compile(optimizer=..., loss=...)` then
`.fit(x, y, epochs=..., batch_size=...)` with a History object. The data is a text
classification set of token id sequences of many lengths, bucketed by length so that each batch
pads little; the model is an EmbeddingBag (a 60k vocabulary) and an MLP, trained by plain SGD.

Planted: the wrapper's `train_on_batch` clears gradients with `zero_grad(set_to_none=False)`:
the 3.8M-entry embedding gradient is filled with zeros, then added to, every step. --fixed:
`zero_grad()` (set to None).
"""

import sys
from collections import defaultdict

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
VOCAB, DIM, CLASSES = 60000, 64, 5


class History:
    def __init__(self):
        self.history = defaultdict(list)


class KerasModel:
    def __init__(self, module):
        self.module = module

    def compile(self, optimizer, loss):
        self.optimizer = optimizer
        self.loss_fn = loss
        return self

    def train_on_batch(self, xb, offsets, yb):
        self.optimizer.zero_grad(set_to_none=FIXED)
        loss = self.loss_fn(self.module(xb, offsets), yb)
        loss.backward()
        self.optimizer.step()
        return loss.detach()

    def fit(self, batches, epochs=1, verbose=1):
        hist = History()
        for epoch in range(epochs):
            self.module.train()
            total = torch.zeros(())
            for xb, offsets, yb in batches():
                total += self.train_on_batch(xb, offsets, yb)
            hist.history["loss"].append(float(total))
            if verbose:
                print(f"Epoch {epoch + 1}/{epochs} - loss: {hist.history['loss'][-1]:.3f}")
        return hist


class BagClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(VOCAB, DIM, mode="mean")
        self.mlp = nn.Sequential(nn.Linear(DIM, 128), nn.ReLU(), nn.Linear(128, CLASSES))

    def forward(self, tokens, offsets):
        return self.mlp(self.bag(tokens, offsets))


def bucketed(docs, labels, batch_size):
    order = sorted(range(len(docs)), key=lambda i: len(docs[i]))
    chunks = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]

    def batches():
        for j in torch.randperm(len(chunks)).tolist():
            chunk = chunks[j]
            seqs = [docs[i] for i in chunk]
            offsets = torch.tensor([0] + [len(s) for s in seqs[:-1]]).cumsum(0)
            yield torch.cat(seqs), offsets, labels[chunk]

    return batches


def main():
    torch.manual_seed(0)
    lengths = torch.randint(8, 120, (4096,))
    docs = [torch.randint(0, VOCAB, (int(n),)) for n in lengths]
    labels = torch.tensor([int(d[0]) % CLASSES for d in docs])
    net = BagClassifier()
    model = KerasModel(net).compile(
        optimizer=torch.optim.SGD(net.parameters(), lr=0.5), loss=nn.CrossEntropyLoss()
    )
    model.fit(bucketed(docs, labels, 32), epochs=3)


if __name__ == "__main__":
    main()
