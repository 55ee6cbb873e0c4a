"""Truncated backpropagation through time for an LSTM language model over one long stream: the
hidden state is detached at each chunk boundary, as it should be, but the epoch's loss is summed
as `epoch_loss = epoch_loss + loss`, so that one variable chains the autograd graphs of every
chunk of the epoch.

Planted: a running total that keeps every step's graph. --fixed: loss.detach() is summed.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
VOCAB, CHUNK, BATCH = 200, 20, 16


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 64)
        self.rnn = nn.LSTM(64, 128, batch_first=True)
        self.out = nn.Linear(128, VOCAB)

    def forward(self, ids, state):
        h, state = self.rnn(self.emb(ids), state)
        return self.out(h), state


def main():
    torch.manual_seed(0)
    stream = torch.randint(0, VOCAB, (BATCH, 4000))
    model = LM()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    for epoch in range(2):
        state, epoch_loss = None, 0.0
        for t in range(0, stream.shape[1] - CHUNK - 1, CHUNK):
            ids, target = stream[:, t:t + CHUNK], stream[:, t + 1:t + CHUNK + 1]
            if state is not None:
                state = tuple(s.detach() for s in state)
            logits, state = model(ids, state)
            loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), target.reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            epoch_loss = epoch_loss + (loss.detach() if FIXED else loss)
        print(epoch, float(epoch_loss))


if __name__ == "__main__":
    main()
