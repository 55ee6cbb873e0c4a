"""CLEAN: a Keras-like `fit()` wrapper over a bucketed text classifier (EmbeddingBag + MLP, a
20k vocabulary), SGD with momentum, `zero_grad()` (set to None), loss accumulated on the
tensor and read once per epoch. Nothing is planted (`--fixed` changes nothing).
"""

import torch
from torch import nn

VOCAB, CLASSES = 20000, 4


class KerasLike:
    def __init__(self, module, optimizer, loss):
        self.module, self.optimizer, self.loss = module, optimizer, loss

    def fit(self, batches, epochs):
        for epoch in range(epochs):
            total = torch.zeros(())
            for tokens, offsets, y in batches():
                self.optimizer.zero_grad()
                loss = self.loss(self.module(tokens, offsets), y)
                loss.backward()
                self.optimizer.step()
                total += loss.detach()
            print(f"Epoch {epoch + 1}/{epochs} - loss: {float(total):.3f}")


class Bag(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(VOCAB, 32)
        self.mlp = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, CLASSES))

    def forward(self, tokens, offsets):
        return self.mlp(self.bag(tokens, offsets))


def main():
    torch.manual_seed(0)
    lengths = torch.randint(10, 100, (4096,))
    docs = [torch.randint(0, VOCAB, (int(n),)) for n in lengths]
    labels = torch.tensor([int(d[0]) % CLASSES for d in docs])
    order = sorted(range(len(docs)), key=lambda i: len(docs[i]))
    chunks = [order[i:i + 64] for i in range(0, len(order), 64)]

    def batches():
        for j in torch.randperm(len(chunks)).tolist():
            seqs = [docs[i] for i in chunks[j]]
            offsets = torch.tensor([0] + [len(s) for s in seqs[:-1]]).cumsum(0)
            yield torch.cat(seqs), offsets, labels[chunks[j]]

    model = Bag()
    KerasLike(model, torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
              nn.CrossEntropyLoss()).fit(batches, epochs=3)


if __name__ == "__main__":
    main()
