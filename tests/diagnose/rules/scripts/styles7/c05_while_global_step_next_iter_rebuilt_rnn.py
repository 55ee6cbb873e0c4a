"""Training driven by a `while global_step < max_steps` loop that pulls batches with `next()` and
restarts the epoch on `StopIteration`; a GRU sentiment-like classifier on a DataLoader of
variable-content token sequences.

Planted: `it = iter(loader)` sits inside the while loop (the author meant it as "make sure we
have an iterator"), so each step builds a new iterator over a shuffled loader with two worker
processes and takes its first batch. --fixed: the iterator is made once and rebuilt on
StopIteration.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv
VOCAB, SEQ = 1000, 40


class Reviews(Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(0)
        self.tokens = torch.randint(1, VOCAB, (n, SEQ), generator=g)
        self.labels = (self.tokens[:, 0] > VOCAB // 2).long()

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.tokens[i], self.labels[i]


class GRUClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 32)
        self.gru = nn.GRU(32, 64, batch_first=True)
        self.fc = nn.Linear(64, 2)

    def forward(self, t):
        _, h = self.gru(self.emb(t))
        return self.fc(h[-1])


def main(max_steps=300):
    loader = DataLoader(Reviews(4096), batch_size=64, shuffle=True, num_workers=2)
    model = GRUClassifier()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    global_step, it = 0, iter(loader)
    while global_step < max_steps:
        if not FIXED:
            it = iter(loader)
        try:
            tokens, labels = next(it)
        except StopIteration:
            it = iter(loader)
            continue
        loss = nn.functional.cross_entropy(model(tokens), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        global_step += 1
        if global_step % 50 == 0:
            print(global_step, round(loss.item(), 4))


if __name__ == "__main__":
    torch.manual_seed(0)
    main()
