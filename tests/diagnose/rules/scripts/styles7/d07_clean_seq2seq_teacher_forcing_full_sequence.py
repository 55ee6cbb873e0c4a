"""CLEAN: seq2seq with teacher forcing written the fast way: the decoder is an `nn.GRU` run over
the whole shifted target at once (teacher forcing ratio 1), an output projection over every
position, greedy decoding only in the per-epoch evaluation under no_grad. Nothing is planted
(`--fixed` changes nothing).
"""

import torch
from torch import nn

VOCAB, LEN, HID, BOS = 12, 24, 64, 11


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, HID)
        self.enc = nn.GRU(HID, HID, batch_first=True)
        self.dec = nn.GRU(HID, HID, batch_first=True)
        self.out = nn.Linear(HID, VOCAB)

    def forward(self, src, tgt):
        _, h = self.enc(self.emb(src))
        shifted = torch.cat([torch.full_like(tgt[:, :1], BOS), tgt[:, :-1]], 1)
        y, _ = self.dec(self.emb(shifted), h)
        return self.out(y)

    @torch.no_grad()
    def greedy(self, src):
        _, h = self.enc(self.emb(src))
        inp, outs = torch.full_like(src[:, :1], BOS), []
        for _ in range(src.shape[1]):
            y, h = self.dec(self.emb(inp), h)
            inp = self.out(y).argmax(2)
            outs.append(inp)
        return torch.cat(outs, 1)


if __name__ == "__main__":
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    model = Seq2Seq()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    for epoch in range(3):
        for _ in range(60):
            src = torch.randint(0, 10, (64, LEN), generator=g)
            tgt = src.flip(1)
            loss = nn.functional.cross_entropy(model(src, tgt).reshape(-1, VOCAB), tgt.reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        src = torch.randint(0, 10, (64, LEN), generator=g)
        acc = (model.greedy(src) == src.flip(1)).float().mean().item()
        model.train()
        print(epoch, loss.item(), acc)
