"""A Transformer-XL-style language model: the text stream is cut into segments, and each
segment attends to a memory of the previous segments' hidden states (`mems`), so context
carries across segment boundaries. Generated token stream.

Planted: the memory is grown with `torch.cat([mems, hidden])` and never trimmed to
`mem_len` (the slice that would keep the last 64 positions is missing): every segment attends
to all earlier positions, so attention grows step after step. --fixed: `mems` keeps only the
last `mem_len` positions (detached, as Transformer-XL does).
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
SEG, MEM_LEN, DIM, VOCAB = 32, 64, 128, 500


class XLBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(DIM, 4, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM))
        self.n1, self.n2 = nn.LayerNorm(DIM), nn.LayerNorm(DIM)

    def forward(self, h, mems):
        context = torch.cat([mems, h], 1)
        h = self.n1(h + self.attn(h, context, context, need_weights=False)[0])
        return self.n2(h + self.ff(h))


class XLModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, DIM)
        self.block = XLBlock()
        self.out = nn.Linear(DIM, VOCAB)

    def forward(self, ids, mems):
        h = self.block(self.emb(ids), mems)
        return self.out(h), h


if __name__ == "__main__":
    torch.manual_seed(0)
    stream = torch.randint(0, VOCAB, (16, 400 * SEG + 1))
    model = XLModel()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    mems = torch.zeros(16, 0, DIM)
    for i, start in enumerate(range(0, stream.shape[1] - 1 - SEG, SEG)):
        ids = stream[:, start : start + SEG]
        target = stream[:, start + 1 : start + SEG + 1]
        logits, hidden = model(ids, mems)
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), target.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        mems = torch.cat([mems, hidden.detach()], 1)
        if FIXED:
            mems = mems[:, -MEM_LEN:]
        if i % 100 == 0:
            print(i, loss.item(), mems.shape[1])
