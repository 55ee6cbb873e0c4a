"""A Mixture-of-Experts feed-forward layer in a small sequence model: a router picks the top-1
expert per token. The author's first version dispatches token by token in a Python loop
(`for t in range(tokens): out[t] = self.experts[choice[t]](x[t])`).

Planted: one tiny expert call per token, hundreds per step. --fixed: dispatch by expert, each
expert applied to all its tokens at once (8 calls per layer).
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class MoE(nn.Module):
    def __init__(self, dim=32, experts=8):
        super().__init__()
        self.router = nn.Linear(dim, experts)
        self.experts = nn.ModuleList(nn.Sequential(nn.Linear(dim, 64), nn.GELU(),
                                                   nn.Linear(64, dim)) for _ in range(experts))

    def forward(self, x):
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        gate = self.router(x).softmax(-1)
        weight, choice = gate.max(-1)
        out = torch.zeros_like(x)
        if FIXED:
            for e, expert in enumerate(self.experts):
                mask = choice == e
                if mask.any():
                    out[mask] = expert(x[mask])
        else:
            for t in range(x.shape[0]):
                out[t] = self.experts[choice[t]](x[t])
        return (out * weight[:, None]).reshape(shape)


class TinyLM(nn.Module):
    def __init__(self, vocab=100, dim=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.moe = MoE(dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens):
        h = self.emb(tokens)
        return self.out(h + self.moe(h))


def main():
    torch.manual_seed(0)
    model = TinyLM()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = torch.randint(0, 100, (512, 17))
    for epoch in range(2):
        for idx in torch.randperm(512).split(16):
            seq = data[idx]
            logits = model(seq[:, :-1])
            loss = nn.functional.cross_entropy(logits.reshape(-1, 100), seq[:, 1:].reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
