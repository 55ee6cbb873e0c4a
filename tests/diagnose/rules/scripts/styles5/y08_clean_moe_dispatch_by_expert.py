"""CLEAN: a Mixture-of-Experts language model that dispatches tokens by expert (one call per
expert over all its tokens), a load-balancing auxiliary loss added to the main loss (one
backward), cosine schedule. Nothing is planted (`--fixed` changes nothing).
"""

import torch
from torch import nn


class MoE(nn.Module):
    def __init__(self, dim=64, experts=4):
        super().__init__()
        self.router = nn.Linear(dim, experts)
        self.experts = nn.ModuleList(nn.Sequential(nn.Linear(dim, 128), nn.GELU(),
                                                   nn.Linear(128, dim)) for _ in range(experts))

    def forward(self, x):
        flat = x.reshape(-1, x.shape[-1])
        gate = self.router(flat).softmax(-1)
        weight, choice = gate.max(-1)
        out = torch.zeros_like(flat)
        for e, expert in enumerate(self.experts):
            idx = torch.nonzero(choice == e).squeeze(1)
            out.index_add_(0, idx, expert(flat[idx]))
        balance = gate.mean(0).pow(2).sum() * len(self.experts)
        return (out * weight[:, None]).reshape(x.shape), balance


class LM(nn.Module):
    def __init__(self, vocab=200, dim=64):
        super().__init__()
        self.emb, self.moe, self.out = nn.Embedding(vocab, dim), MoE(dim), nn.Linear(dim, vocab)

    def forward(self, tokens):
        h = self.emb(tokens)
        m, balance = self.moe(h)
        return self.out(h + m), balance


def main():
    torch.manual_seed(0)
    model = LM()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = torch.randint(0, 200, (2048, 33))
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=64)
    for epoch in range(2):
        for idx in torch.randperm(2048).split(64):
            logits, balance = model(data[idx, :-1])
            loss = nn.functional.cross_entropy(logits.reshape(-1, 200), data[idx, 1:].reshape(-1))
            opt.zero_grad()
            (loss + 0.01 * balance).backward()
            opt.step()
            sched.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
