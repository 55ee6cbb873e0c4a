"""A tiny GRU seq2seq (copy-reverse task) evaluated with beam search every 20 steps. The
`beam_search()` method runs the decoder step by step for each beam; the evaluation helper
calls it without no_grad/inference_mode, so every decoder step records autograd history.

Planted: beam-search evaluation with autograd on. --fixed: the evaluation runs under
torch.inference_mode().
"""

import contextlib
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
VOCAB, LEN, BOS = 20, 10, 0


class Seq2Seq(nn.Module):
    def __init__(self, dim=128):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, dim)
        self.enc, self.dec = nn.GRU(dim, dim, batch_first=True), nn.GRUCell(dim, dim)
        self.out = nn.Linear(dim, VOCAB)

    def forward(self, src, tgt_in):
        _, h = self.enc(self.emb(src))
        h, logits = h[0], []
        for t in range(tgt_in.shape[1]):
            h = self.dec(self.emb(tgt_in[:, t]), h)
            logits.append(self.out(h))
        return torch.stack(logits, 1)

    def beam_search(self, src, beam=4):
        _, h = self.enc(self.emb(src[None]))
        beams = [(0.0, [BOS], h[0])]
        for _ in range(LEN):
            candidates = []
            for score, seq, state in beams:
                state = self.dec(self.emb(torch.tensor([seq[-1]])), state)
                logp = self.out(state).log_softmax(-1)[0]
                top = logp.topk(beam)
                for lp, tok in zip(top.values, top.indices):
                    candidates.append((score + lp, seq + [int(tok)], state))
            beams = sorted(candidates, key=lambda c: float(c[0]), reverse=True)[:beam]
        return beams[0][1][1:]


def evaluate(model, sources):
    context = torch.inference_mode() if FIXED else contextlib.nullcontext()
    with context:
        hits = [model.beam_search(s) == s.flip(0).tolist() for s in sources]
    return sum(hits) / len(hits)


def main():
    torch.manual_seed(0)
    model = Seq2Seq()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    src = torch.randint(1, VOCAB, (2048, LEN))
    tgt = src.flip(1)
    held_out = torch.randint(1, VOCAB, (8, LEN))
    for step, idx in enumerate(torch.randperm(2048).split(32)):
        tgt_in = torch.cat([torch.zeros(len(idx), 1, dtype=torch.long), tgt[idx, :-1]], 1)
        loss = nn.functional.cross_entropy(model(src[idx], tgt_in).reshape(-1, VOCAB),
                                           tgt[idx].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 20 == 19:
            print(step, loss.item(), evaluate(model, held_out))


if __name__ == "__main__":
    main()
