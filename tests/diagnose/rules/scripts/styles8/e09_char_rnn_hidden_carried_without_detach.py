"""A character-level language model over consecutive chunks of a text. The author wanted the
model to see the whole context before each chunk but did not want to carry (and detach) the
LSTM's hidden state between chunks, so each step re-reads the text from its start.

Planted: each step runs the LSTM over the whole prefix `streams[:, : start + CHUNK]` and scores
only its last chunk, so every step reads more text than the one before: step time grows with the
step index. --fixed: truncated backpropagation through time, the hidden state carried across
chunks and detached, each step reading one chunk.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
CHUNK, BATCH = 16, 16

TEXT = "the quick brown fox jumps over the lazy dog while the cat sleeps on the warm mat. " * 400


class CharLM(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.embed = nn.Embedding(vocab, 32)
        self.lstm = nn.LSTM(32, 64, batch_first=True)
        self.out = nn.Linear(64, vocab)

    def forward(self, x, hidden=None):
        y, hidden = self.lstm(self.embed(x), hidden)
        return self.out(y), hidden


if __name__ == "__main__":
    torch.manual_seed(0)
    chars = sorted(set(TEXT))
    data = torch.tensor([chars.index(c) for c in TEXT])
    per_row = len(data) // BATCH
    streams = data[: per_row * BATCH].view(BATCH, per_row)
    model = CharLM(len(chars))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    hidden = None
    for step, start in enumerate(range(0, min(per_row - 1, 150 * CHUNK), CHUNK)):
        y = streams[:, start + 1 : start + CHUNK + 1]
        if FIXED:
            if hidden is not None:
                hidden = tuple(t.detach() for t in hidden)
            logits, hidden = model(streams[:, start : start + CHUNK], hidden)
        else:
            logits, _ = model(streams[:, : start + CHUNK])
            logits = logits[:, -CHUNK:]
        loss = nn.functional.cross_entropy(logits.reshape(-1, len(chars)), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 50 == 0:
            print(step, loss.item())
