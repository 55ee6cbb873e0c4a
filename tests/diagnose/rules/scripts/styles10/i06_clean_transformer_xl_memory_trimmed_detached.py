"""Clean: a Transformer-XL-style language model whose segment memory (`mems`) is the detached
hidden states of the previous segments, trimmed to the last `MEM_LEN` positions after every
segment: each step attends to a fixed-size context. Generated token stream.

No planted problem; `--fixed` changes nothing (kept for the bench's control run).
"""

import torch
from torch import nn

SEG, MEM_LEN, DIM, VOCAB = 32, 64, 128, 500


class XLModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, DIM)
        self.attn = nn.MultiheadAttention(DIM, 4, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM))
        self.n1, self.n2 = nn.LayerNorm(DIM), nn.LayerNorm(DIM)
        self.out = nn.Linear(DIM, VOCAB)

    def forward(self, ids, mems):
        h = self.emb(ids)
        context = torch.cat([mems, h], 1)
        h = self.n1(h + self.attn(h, context, context, need_weights=False)[0])
        h = self.n2(h + self.ff(h))
        return self.out(h), h


if __name__ == "__main__":
    torch.manual_seed(0)
    stream = torch.randint(0, VOCAB, (16, 400 * SEG + 1))
    model = XLModel()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    mems = torch.zeros(16, 0, DIM)
    for i, start in enumerate(range(0, stream.shape[1] - 1 - SEG, SEG)):
        logits, hidden = model(stream[:, start : start + SEG], mems)
        loss = nn.functional.cross_entropy(logits.flatten(0, 1),
                                           stream[:, start + 1 : start + SEG + 1].flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        mems = torch.cat([mems, hidden.detach()], 1)[:, -MEM_LEN:]
        if i % 100 == 0:
            print(i, loss.item())
