"""Variable-length token sequences; a custom collate_fn pads them token by token in Python
before an LSTM tagger.

Planted: collate_fn builds the padded batch element by element. --fixed: pad_sequence.
"""

import sys

import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader

FIXED = "--fixed" in sys.argv


def make_corpus(n=3000, vocab=400):
    g = torch.Generator().manual_seed(0)
    lengths = torch.randint(20, 60, (n,), generator=g)
    return [torch.randint(1, vocab, (int(k),), generator=g) for k in lengths]


def slow_pad_collate(batch):
    longest = max(len(seq) for seq in batch)
    padded = torch.zeros(len(batch), longest, dtype=torch.long)
    for row, seq in enumerate(batch):
        for col, token in enumerate(seq.tolist()):
            padded[row, col] = token
    return padded


def fast_pad_collate(batch):
    return pad_sequence(batch, batch_first=True)


class Tagger(nn.Module):
    def __init__(self, vocab=400, dim=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.lstm = nn.LSTM(dim, dim, batch_first=True)
        self.out = nn.Linear(dim, 2)

    def forward(self, tokens):
        return self.out(self.lstm(self.emb(tokens))[0])


def main():
    torch.manual_seed(0)
    corpus = make_corpus()
    loader = DataLoader(corpus, batch_size=32, shuffle=True,
                        collate_fn=fast_pad_collate if FIXED else slow_pad_collate)
    model = Tagger()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3, foreach=True)
    for epoch in range(2):
        for tokens in loader:
            target = (tokens % 2).clamp(max=1)
            logits = model(tokens)
            loss = nn.functional.cross_entropy(logits.reshape(-1, 2), target.reshape(-1),
                                               ignore_index=0)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"epoch {epoch}: {loss.item():.3f}")


if __name__ == "__main__":
    main()
