"""A seq2seq model that learns to reverse digit sequences: a GRU encoder, a decoder trained with
teacher forcing (the gold previous token is the decoder's input at every position) and greedy
decoding for the exact-match accuracy printed per epoch.

Planted: under teacher forcing the decoder is still run one position at a time with an
`nn.GRUCell` and a Python loop over the 24 target positions (embedding, cell, output projection
per position), as greedy decoding must be. --fixed: the teacher-forced decoder runs the whole
target sequence in one `nn.GRU` call (the same weights; the cell is kept for greedy decoding).
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
VOCAB, SEQ, BOS = 12, 24, 11


class Seq2Seq(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 32)
        self.encoder = nn.GRU(32, hidden, batch_first=True)
        self.decoder = nn.GRU(32, hidden, batch_first=True)
        self.out = nn.Linear(hidden, VOCAB)

    def cell_step(self, token, h):
        w = self.decoder
        h = torch.gru_cell(self.embed(token), h, w.weight_ih_l0, w.weight_hh_l0, w.bias_ih_l0,
                           w.bias_hh_l0)
        return self.out(h), h

    def forward(self, src, tgt_in):
        _, h = self.encoder(self.embed(src))
        if FIXED:
            dec, _ = self.decoder(self.embed(tgt_in), h)
            return self.out(dec)
        h, logits = h[0], []
        for t in range(tgt_in.shape[1]):
            step_logits, h = self.cell_step(tgt_in[:, t], h)
            logits.append(step_logits)
        return torch.stack(logits, 1)

    @torch.no_grad()
    def greedy(self, src):
        _, h = self.encoder(self.embed(src))
        h, token, outs = h[0], torch.full((len(src),), BOS), []
        for _ in range(SEQ):
            logits, h = self.cell_step(token, h)
            token = logits.argmax(1)
            outs.append(token)
        return torch.stack(outs, 1)


if __name__ == "__main__":
    torch.manual_seed(0)
    src = torch.randint(0, 10, (6000, SEQ))
    tgt = src.flip(1)
    tgt_in = torch.cat([torch.full((len(src), 1), BOS), tgt[:, :-1]], 1)
    model = Seq2Seq()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for epoch in range(3):
        model.train()
        perm = torch.randperm(3000)
        for start in range(0, 3000, 64):
            idx = perm[start : start + 64]
            logits = model(src[idx], tgt_in[idx])
            loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), tgt[idx].reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        exact = (model.greedy(src[5000:]) == tgt[5000:]).all(1).float().mean()
        print("epoch", epoch, loss.item(), "exact", exact.item())
