"""A seq2seq model (GRU encoder, GRUCell decoder) trained with teacher forcing; after every
epoch `evaluate()` greedy-decodes the validation sources position by position and reports the
token accuracy. The decoding reuses `decode_step()` from training and nobody switched autograd
off for it.

Planted: the greedy decoding of the validation set records autograd graphs (no no_grad /
inference_mode). --fixed: evaluate() runs under torch.no_grad().
"""

import contextlib
import sys

import torch
from torch import nn

VOCAB, HIDDEN, BOS, LEN = 40, 128, 1, 24


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.src_emb = nn.Embedding(VOCAB, HIDDEN)
        self.tgt_emb = nn.Embedding(VOCAB, HIDDEN)
        self.encoder = nn.GRU(HIDDEN, HIDDEN, batch_first=True)
        self.cell = nn.GRUCell(HIDDEN, HIDDEN)
        self.out = nn.Linear(HIDDEN, VOCAB)

    def encode(self, src):
        return self.encoder(self.src_emb(src))[1][0]

    def decode_step(self, prev, h):
        h = self.cell(self.tgt_emb(prev), h)
        return self.out(h), h

    def forward(self, src, tgt):  # teacher forcing
        h = self.encode(src)
        prev = torch.full((len(src),), BOS, dtype=torch.long)
        logits = []
        for t in range(tgt.size(1)):
            step_logits, h = self.decode_step(prev, h)
            logits.append(step_logits)
            prev = tgt[:, t]
        return torch.stack(logits, 1)

    def greedy_decode(self, src, max_len):
        h = self.encode(src)
        prev = torch.full((len(src),), BOS, dtype=torch.long)
        out = []
        for _ in range(max_len):
            step_logits, h = self.decode_step(prev, h)
            prev = step_logits.argmax(-1)
            out.append(prev)
        return torch.stack(out, 1)


def evaluate(model, val_src, val_tgt, no_grad):
    model.eval()
    with torch.no_grad() if no_grad else contextlib.nullcontext():
        hits = 0.0
        for s, t in zip(val_src.split(512), val_tgt.split(512)):
            hits += (model.greedy_decode(s, LEN) == t).float().sum().item()
    model.train()
    return hits / val_tgt.numel()


def main():
    torch.manual_seed(0)
    model = Seq2Seq()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    src = torch.randint(2, VOCAB, (1024, LEN))
    val_src = torch.randint(2, VOCAB, (4096, LEN))
    for epoch in range(4):
        for s in src.split(64):
            t = s.flip(1)
            loss = nn.functional.cross_entropy(model(s, t).reshape(-1, VOCAB), t.reshape(-1))
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        acc = evaluate(model, val_src, val_src.flip(1), no_grad="--fixed" in sys.argv)
        print(f"epoch {epoch} loss {loss.item():.3f} val token acc {acc:.3f}")


if __name__ == "__main__":
    main()
