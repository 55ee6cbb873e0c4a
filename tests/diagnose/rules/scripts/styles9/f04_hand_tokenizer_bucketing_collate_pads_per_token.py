"""Text classification with a hand-written whitespace tokenizer and vocabulary, length-bucketed
batches (sentences sorted by length into buckets, buckets shuffled), and a collate function that
pads to the longest sentence of the batch and builds the attention mask; an embedding bag-like
mean over the unpadded tokens and a linear head.

Planted: the collate function pads by walking every token position of every sentence in Python
(`for j in range(longest): row.append(ids[j] if j < len(ids) else PAD)`), then builds the mask the
same way. --fixed: `pad_sequence` and a mask from the lengths.
"""

import random
import sys

import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader

FIXED = "--fixed" in sys.argv
PAD = 0
WORDS = [f"w{i}" for i in range(3000)]


class Tokenizer:
    def __init__(self, corpus):
        vocab = sorted({w for line in corpus for w in line.split()})
        self.ids = {w: i + 1 for i, w in enumerate(vocab)}

    def __call__(self, line):
        return [self.ids[w] for w in line.split()]


def make_corpus(n, rng):
    lines, labels = [], []
    for _ in range(n):
        k = rng.randint(20, 120)
        words = rng.choices(WORDS, k=k)
        lines.append(" ".join(words))
        labels.append(int(sum(int(w[1:]) for w in words[:5]) % 2))
    return lines, labels


def bucketed(lengths, batch_size, rng):
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    batches = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    rng.shuffle(batches)
    return batches


def collate_python(batch):
    longest = max(len(ids) for ids, _ in batch)
    rows, masks = [], []
    for ids, _ in batch:
        row, mask = [], []
        for j in range(longest):
            row.append(ids[j] if j < len(ids) else PAD)
            mask.append(1.0 if j < len(ids) else 0.0)
        rows.append(row)
        masks.append(mask)
    labels = torch.tensor([label for _, label in batch])
    return torch.tensor(rows), torch.tensor(masks), labels


def collate_vectorised(batch):
    seqs = [torch.tensor(ids) for ids, _ in batch]
    lengths = torch.tensor([len(s) for s in seqs])
    tokens = pad_sequence(seqs, batch_first=True, padding_value=PAD)
    mask = (torch.arange(tokens.shape[1]) < lengths[:, None]).float()
    return tokens, mask, torch.tensor([label for _, label in batch])


class MeanPoolClassifier(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.embed = nn.Embedding(vocab, 64, padding_idx=PAD)
        self.head = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 2))

    def forward(self, tokens, mask):
        e = self.embed(tokens) * mask.unsqueeze(-1)
        return self.head(e.sum(1) / mask.sum(1, keepdim=True))


if __name__ == "__main__":
    torch.manual_seed(0)
    rng = random.Random(0)
    lines, labels = make_corpus(6000, rng)
    tok = Tokenizer(lines)
    data = [(tok(line), label) for line, label in zip(lines, labels)]
    batches = bucketed([len(ids) for ids, _ in data], 64, rng)
    loader = DataLoader(data, batch_sampler=batches,
                        collate_fn=collate_vectorised if FIXED else collate_python)
    model = MeanPoolClassifier(len(tok.ids) + 1)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    for epoch in range(3):
        for tokens, mask, y in loader:
            loss = nn.functional.cross_entropy(model(tokens, mask), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
