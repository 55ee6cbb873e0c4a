"""A loop whose collate_fn pads token sequences one token at a time (rule D111), over a shuffled
dataset that crops each sequence with its own NumPy generator and drops tokens with torch's, and
a model with Dropout: every stream the collate what-if could disturb (its side loader fetches
samples of the same dataset). `train(steps)` returns the losses, to run under torchdoctor.watch()
and then on after it."""

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Crops(Dataset):
    def __init__(self, n=512):
        generator = torch.Generator().manual_seed(0)
        self.data = [
            torch.randint(1, 300, (int(length),), generator=generator)
            for length in torch.randint(60, 160, (n,), generator=generator)
        ]
        self.rng = np.random.default_rng(1)  # the dataset's own augmentation stream

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        tokens = self.data[i][int(self.rng.integers(0, 20)) :]
        keep = torch.rand(len(tokens)) > 0.05
        return tokens[keep], int(tokens[0]) % 2


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
        self.embed = nn.EmbeddingBag(300, 32, padding_idx=0)
        self.drop = nn.Dropout(0.2)
        self.out = nn.Linear(32, 2)

    def forward(self, tokens):
        return self.out(self.drop(self.embed(tokens)))


def build():
    torch.manual_seed(0)
    loader = DataLoader(Crops(), batch_size=16, shuffle=True, collate_fn=pad_collate)
    model = Bag()
    return loader, model, torch.optim.Adam(model.parameters(), lr=1e-3)


def train(loader, model, optimizer, steps):
    losses = []
    while len(losses) < steps:
        for tokens, labels in loader:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(tokens), labels)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            if len(losses) == steps:
                break
    return losses
