"""Clean: a GRU seq2seq trained with teacher forcing on the whole target sequence in one call
(the decoder is not stepped in Python); greedy decoding for the per-epoch exact-match score
runs under `inference_mode` in eval mode on a small held-out set. `--fixed` changes nothing.
"""

import torch
from torch import nn

V = 24


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, 64)
        self.enc = nn.GRU(64, 256, batch_first=True)
        self.dec = nn.GRU(64, 256, batch_first=True)
        self.out = nn.Linear(256, V)

    def forward(self, src, tgt_in):
        _, h = self.enc(self.emb(src))
        return self.out(self.dec(self.emb(tgt_in), h)[0])


if __name__ == "__main__":
    torch.manual_seed(0)
    src = torch.randint(1, V, (4096, 10))
    tgt = torch.cat([torch.zeros(4096, 1, dtype=torch.long), src.flip(1)], 1)
    model = Seq2Seq()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    for epoch in range(3):
        model.train()
        for idx in torch.randperm(3584).split(128):
            logits = model(src[idx], tgt[idx, :-1])
            loss = nn.functional.cross_entropy(logits.reshape(-1, V), tgt[idx, 1:].reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        with torch.inference_mode():
            pred = model(src[3584:], tgt[3584:, :-1]).argmax(-1)
            exact = (pred == tgt[3584:, 1:]).all(1).float().mean()
        print("epoch", epoch, float(loss), float(exact))
