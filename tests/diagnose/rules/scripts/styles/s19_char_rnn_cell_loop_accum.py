"""Character language model stepping an LSTMCell over time in Python, with gradient accumulation.

Planted: for t in range(seq_len): cell(...) (a loop of tiny ops). --fixed: one nn.LSTM call.
"""

import sys

import torch
from torch import nn


class CharModel(nn.Module):
    def __init__(self, vocab, hidden, fused):
        super().__init__()
        self.fused = fused
        self.embed = nn.Embedding(vocab, 32)
        self.lstm = nn.LSTM(32, hidden, batch_first=True) if fused else nn.LSTMCell(32, hidden)
        self.proj = nn.Linear(hidden, vocab)
        self.hidden = hidden

    def forward(self, ids):
        e = self.embed(ids)
        if self.fused:
            out, _ = self.lstm(e)
        else:
            h = c = e.new_zeros(ids.shape[0], self.hidden)
            outs = []
            for t in range(ids.shape[1]):
                h, c = self.lstm(e[:, t], (h, c))
                outs.append(h)
            out = torch.stack(outs, 1)
        return self.proj(out)


def main():
    torch.manual_seed(0)
    text = torch.randint(0, 40, (20000,))
    lm = CharModel(40, 32, fused="--fixed" in sys.argv)
    opt = torch.optim.Adam(lm.parameters(), lr=2e-3, foreach=True)
    accum, seq, bs = 2, 48, 8
    for it in range(200):
        starts = torch.randint(0, len(text) - seq - 1, (bs,))
        chunk = torch.stack([text[s:s + seq + 1] for s in starts])
        logits = lm(chunk[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, 40), chunk[:, 1:].reshape(-1))
        (loss / accum).backward()
        if (it + 1) % accum == 0:
            opt.step()
            opt.zero_grad()


if __name__ == "__main__":
    main()
