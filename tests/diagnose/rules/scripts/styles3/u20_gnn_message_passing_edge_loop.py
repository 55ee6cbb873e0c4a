"""A graph network over a random graph: messages are computed per edge in one batched op, but
aggregated into the destination nodes edge by edge in a Python loop (`out[dst] += msg`).

Planted: a Python loop of tiny ops over the edges. --fixed: one index_add_ (scatter_add).
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class MessagePassing(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.msg = nn.Linear(2 * dim, dim)
        self.upd = nn.Linear(2 * dim, dim)

    def forward(self, h, src, dst):
        messages = torch.relu(self.msg(torch.cat([h[src], h[dst]], 1)))
        if FIXED:
            agg = torch.zeros_like(h).index_add_(0, dst, messages)
        else:
            agg = torch.zeros_like(h)
            for e in range(len(dst)):
                agg[dst[e]] = agg[dst[e]] + messages[e]
        return torch.relu(self.upd(torch.cat([h, agg], 1)))


class GNN(nn.Module):
    def __init__(self, dim=32, layers=2):
        super().__init__()
        self.inp = nn.Linear(8, dim)
        self.layers = nn.ModuleList(MessagePassing(dim) for _ in range(layers))
        self.out = nn.Linear(dim, 3)

    def forward(self, x, src, dst):
        h = self.inp(x)
        for layer in self.layers:
            h = layer(h, src, dst)
        return self.out(h)


def main():
    torch.manual_seed(0)
    graphs = []
    for _ in range(20):
        n = 40
        src, dst = torch.randint(0, n, (120,)), torch.randint(0, n, (120,))
        graphs.append((torch.randn(n, 8), src, dst, torch.randint(0, 3, (n,))))
    model = GNN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for epoch in range(20):
        for x, src, dst, y in graphs:
            loss = nn.functional.cross_entropy(model(x, src, dst), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
