"""Seq2seq with teacher forcing: a GRU encoder and a decoder written step by step with a
`GRUCell`, the next input chosen by `random.random() < teacher_forcing_ratio`; the task reverses
digit strings.

Planted: the ratio is 1.0 (always teacher forcing) yet the decoder still runs one `GRUCell` call
and one output projection per target position in a Python loop over 48 positions with a small
hidden size. --fixed: with the whole target known in advance, the decoder runs as one `nn.GRU`
over the shifted target sequence.
"""

import random
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
VOCAB, LEN, HID, BOS = 12, 48, 32, 11
TEACHER_FORCING = 1.0


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, HID)
        self.enc = nn.GRU(HID, HID, batch_first=True)
        if FIXED:
            self.dec = nn.GRU(HID, HID, batch_first=True)
        else:
            self.cell = nn.GRUCell(HID, HID)
        self.out = nn.Linear(HID, VOCAB)

    def forward(self, src, tgt):
        _, h = self.enc(self.emb(src))
        shifted = torch.cat([torch.full_like(tgt[:, :1], BOS), tgt[:, :-1]], 1)
        if FIXED:
            y, _ = self.dec(self.emb(shifted), h)
            return self.out(y)
        h, inp, logits = h[0], shifted[:, 0], []
        for t in range(tgt.shape[1]):
            h = self.cell(self.emb(inp), h)
            step = self.out(h)
            logits.append(step)
            if t + 1 < tgt.shape[1]:
                use_teacher = random.random() < TEACHER_FORCING
                inp = shifted[:, t + 1] if use_teacher else step.argmax(1)
        return torch.stack(logits, 1)


if __name__ == "__main__":
    torch.manual_seed(0)
    random.seed(0)
    g = torch.Generator().manual_seed(0)
    model = Seq2Seq()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for step in range(400):
        src = torch.randint(0, 10, (32, LEN), generator=g)
        tgt = src.flip(1)
        logits = model(src, tgt)
        loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), tgt.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(step, loss.item())
