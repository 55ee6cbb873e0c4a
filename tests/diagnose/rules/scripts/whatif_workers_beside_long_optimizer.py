"""Per-sample NumPy work in __getitem__ (num_workers=0) beside a step whose optimizer, not its
forward and backward, is most of the compute: a large embedding table updated densely by Adam.
Worker processes would build the next batch while the optimizer runs, so the data wait they can
hide is set by the whole step, not by forward and backward alone."""

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Tokens(Dataset):
    # 12 batches: the workers what-if times at most 7 of them per setting, whatever its allowance
    def __init__(self, n=384):
        rng = np.random.default_rng(0)
        self.raw = rng.standard_normal((n, 256))
        self.vocab = 20_000

    def __len__(self):
        return len(self.raw)

    def __getitem__(self, i):
        row = self.raw[i]
        for _ in range(40):  # per-sample feature work, redone every epoch
            row = np.tanh(row) + 0.01 * np.sort(row)
        ids = (np.abs(row[:16]) * 1e4).astype(np.int64) % self.vocab
        return torch.from_numpy(ids), int(row[0] > 0)


class Bag(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, 32)
        self.out = nn.Linear(32, 2)

    def forward(self, ids):
        return self.out(self.embed(ids))


def main():
    torch.manual_seed(0)
    dataset = Tokens()
    loader = DataLoader(dataset, batch_size=32, shuffle=True)
    model = Bag(dataset.vocab)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=False)
    for epoch in range(2):
        for ids, labels in loader:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(ids), labels)
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
