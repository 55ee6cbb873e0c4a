"""GRU encoder-decoder (seq2seq) with teacher forcing on a reverse-the-sequence task. The epoch's
losses are kept in a list for a plot at the end.

Planted: `epoch_losses.append(loss)` keeps every step's graph alive (memory grows each step).
--fixed: `epoch_losses.append(loss.detach())`.
"""

import random
import sys

import torch
from torch import nn

VOCAB, HIDDEN, LENGTH = 32, 128, 12
FIXED = "--fixed" in sys.argv


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, HIDDEN)
        self.rnn = nn.GRU(HIDDEN, HIDDEN, batch_first=True)

    def forward(self, src):
        _, h = self.rnn(self.emb(src))
        return h


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, HIDDEN)
        self.rnn = nn.GRU(HIDDEN, HIDDEN, batch_first=True)
        self.out = nn.Linear(HIDDEN, VOCAB)

    def forward(self, tgt_in, h):
        o, h = self.rnn(self.emb(tgt_in), h)
        return self.out(o), h


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder, self.decoder = Encoder(), Decoder()

    def forward(self, src, tgt, teacher_forcing=0.5):
        h = self.encoder(src)
        if random.random() < teacher_forcing:
            logits, _ = self.decoder(tgt[:, :-1], h)
            return logits
        token, outs = tgt[:, :1], []
        for _ in range(tgt.size(1) - 1):
            step_logits, h = self.decoder(token, h)
            outs.append(step_logits)
            token = step_logits.argmax(-1)
        return torch.cat(outs, 1)


def batch(n=64):
    src = torch.randint(2, VOCAB, (n, LENGTH))
    tgt = torch.cat([torch.ones(n, 1, dtype=torch.long), src.flip(1)], 1)
    return src, tgt


def main():
    random.seed(0)
    torch.manual_seed(0)
    model = Seq2Seq()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)
    crit = nn.CrossEntropyLoss()
    for epoch in range(3):
        epoch_losses = []
        for _ in range(80):
            src, tgt = batch()
            logits = model(src, tgt, teacher_forcing=1.0)
            loss = crit(logits.reshape(-1, VOCAB), tgt[:, 1:].reshape(-1))
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            epoch_losses.append(loss.detach() if FIXED else loss)
        print(f"epoch {epoch}: loss {torch.stack(epoch_losses).mean().item():.3f}")


if __name__ == "__main__":
    main()
