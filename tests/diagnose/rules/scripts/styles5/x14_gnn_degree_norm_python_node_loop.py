"""A graph convolutional network in plain torch: messages are aggregated with `index_add_`
(a scatter-sum) over an edge list. The symmetric degree normalisation is recomputed every step
by a helper that walks the nodes in a Python loop, one tiny tensor op per node.

Planted: 600 tiny ops per step in a Python loop over nodes. --fixed: degrees with one
`torch.bincount` and the normalisation as one vector op.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
NODES, EDGES, FEATS = 600, 4000, 32


def degree_norm(edge_index, num_nodes):
    src, dst = edge_index
    if FIXED:
        deg = torch.bincount(dst, minlength=num_nodes).float().clamp(min=1)
    else:
        deg = torch.zeros(num_nodes)
        for node in range(num_nodes):
            deg[node] = (dst == node).sum().clamp(min=1)
    inv = deg.rsqrt()
    return inv[src] * inv[dst]


class GCNLayer(nn.Module):
    def __init__(self, dim_in, dim_out):
        super().__init__()
        self.lin = nn.Linear(dim_in, dim_out)

    def forward(self, x, edge_index, norm):
        src, dst = edge_index
        h = self.lin(x)
        out = torch.zeros_like(h).index_add_(0, dst, h[src] * norm[:, None])
        return out + h


class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2 = GCNLayer(FEATS, 64), GCNLayer(64, 4)

    def forward(self, x, edge_index):
        norm = degree_norm(edge_index, x.shape[0])
        return self.l2(torch.relu(self.l1(x, edge_index, norm)), edge_index, norm)


def main():
    torch.manual_seed(0)
    x = torch.randn(NODES, FEATS)
    edge_index = torch.randint(0, NODES, (2, EDGES))
    y = torch.randint(0, 4, (NODES,))
    train_mask = torch.rand(NODES) < 0.5
    model = GCN()
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    for epoch in range(40):
        out = model(x, edge_index)
        loss = nn.functional.cross_entropy(out[train_mask], y[train_mask])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if epoch % 10 == 0:
            print(epoch, loss.item())


if __name__ == "__main__":
    main()
