"""Variable-length token sequences padded by a collate_fn that copies one token at a time."""

import random

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Sequences(Dataset):
    def __init__(self, n=2000):
        rng = random.Random(0)
        self.data = [torch.randint(1, 500, (rng.randint(40, 200),)) for _ in range(n)]
        self.labels = [int(s[0]) % 2 for s in self.data]

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        return self.data[i], self.labels[i]


def pad_collate(samples):
    longest = max(len(tokens) for tokens, _ in samples)
    batch = torch.zeros(len(samples), longest, dtype=torch.long)
    for i, (tokens, _) in enumerate(samples):
        for j, token in enumerate(tokens.tolist()):  # one Python step per token
            batch[i, j] = token
    return batch, torch.tensor([label for _, label in samples])


class Bag(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.EmbeddingBag(500, 32, padding_idx=0)
        self.out = nn.Linear(32, 2)

    def forward(self, tokens):
        return self.out(self.embed(tokens))


def main():
    torch.manual_seed(0)
    loader = DataLoader(Sequences(), batch_size=16, shuffle=True, collate_fn=pad_collate)
    model = Bag()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for tokens, labels in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(tokens), labels)
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
