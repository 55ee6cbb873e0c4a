"""A full-graph GCN (dense normalised adjacency, two propagation layers) trained on two tasks at
once: node classification and edge reconstruction from the same embeddings.

Planted: each task's loss gets its own backward, the first with `retain_graph=True`, so the
shared GCN layers are backpropagated twice per step. --fixed: one backward of the summed loss.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
N, F, C = 1200, 64, 4


class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2 = nn.Linear(F, 128), nn.Linear(128, 64)
        self.cls = nn.Linear(64, C)

    def forward(self, a_hat, x):
        h = torch.relu(a_hat @ self.l1(x))
        return a_hat @ self.l2(h)


if __name__ == "__main__":
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    adj = (torch.rand(N, N, generator=g) < 0.01).float()
    adj = ((adj + adj.T) > 0).float() + torch.eye(N)
    d = adj.sum(1).rsqrt()
    a_hat = d[:, None] * adj * d[None]
    x = torch.randn(N, F, generator=g)
    y = torch.randint(0, C, (N,), generator=g)
    train_mask = torch.rand(N, generator=g) < 0.3
    model = GCN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for epoch in range(150):
        z = model(a_hat, x)
        node_loss = nn.functional.cross_entropy(model.cls(z[train_mask]), y[train_mask])
        pairs = torch.randint(0, N, (2, 4096), generator=g)
        logits = (z[pairs[0]] * z[pairs[1]]).sum(1)
        edge_loss = nn.functional.binary_cross_entropy_with_logits(logits, adj[pairs[0], pairs[1]])
        opt.zero_grad()
        if FIXED:
            (node_loss + 0.5 * edge_loss).backward()
        else:
            node_loss.backward(retain_graph=True)
            (0.5 * edge_loss).backward()
        opt.step()
        if epoch % 50 == 0:
            print(epoch, node_loss.item(), edge_loss.item())
