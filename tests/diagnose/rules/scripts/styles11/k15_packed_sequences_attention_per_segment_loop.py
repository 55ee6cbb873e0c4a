"""Sequence packing for a small Transformer: variable-length sequences are concatenated into one
long row per batch with `cu_seqlens` offsets (as FlashAttention's varlen API takes them). The
model has to keep attention inside each sequence.

Planted: without a varlen kernel, the attention module loops in Python over the packed segments
(`for start, end in zip(cu[:-1], cu[1:])`), running a tiny attention per sequence: ~100 small
matmuls and softmaxes per layer per step. --fixed: a block-diagonal mask built once per batch
and one masked attention over the whole packed row.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class PackedAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv, self.out = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)

    def forward(self, x, cu, mask):
        q, k, v = self.qkv(x).chunk(3, -1)
        if FIXED:
            att = (q @ k.T / q.shape[-1] ** 0.5).masked_fill(~mask, float("-inf"))
            return self.out(att.softmax(-1) @ v)
        parts = []
        for start, end in zip(cu[:-1].tolist(), cu[1:].tolist()):
            qs, ks, vs = q[start:end], k[start:end], v[start:end]
            parts.append((qs @ ks.T / qs.shape[-1] ** 0.5).softmax(-1) @ vs)
        return self.out(torch.cat(parts))


class PackedLM(nn.Module):
    def __init__(self, vocab=500, dim=64, layers=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.att = nn.ModuleList(PackedAttention(dim) for _ in range(layers))
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens, cu, mask):
        h = self.emb(tokens)
        for att in self.att:
            h = h + att(h, cu, mask)
        return self.head(h)


def pack(rng_lengths, vocab=500):
    lengths = rng_lengths
    tokens = torch.randint(0, vocab, (int(lengths.sum()),))
    cu = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)])
    seg = torch.repeat_interleave(torch.arange(len(lengths)), lengths)
    return tokens, cu, seg[:, None] == seg[None, :]


if __name__ == "__main__":
    torch.manual_seed(0)
    model = PackedLM()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(150):
        tokens, cu, mask = pack(torch.randint(4, 12, (60,)))
        logits = model(tokens[:-1], cu.clamp(max=len(tokens) - 1), mask[:-1, :-1])
        loss = nn.functional.cross_entropy(logits, tokens[1:])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 50 == 0:
            print(step, float(loss))
