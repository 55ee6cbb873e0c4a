"""A generic `run_epoch(fn, loader)` that takes the step as a closure (`make_train_fn` /
`make_eval_fn` close over model, optimizer and the graph); a two-layer mean-aggregation GNN on a
random graph, trained on mini-batches of target nodes.

Planted: the closure gathers each target node's neighbour mean in a Python loop over the nodes of
the batch (`for v in nodes: ...adj_list[v]...`). --fixed: one sparse matrix product with the
row-normalised adjacency, made once (the input features do not train), indexed per batch.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
NODES, FEATS, CLASSES = 3000, 32, 5


def random_graph(g):
    src = torch.randint(0, NODES, (NODES * 8,), generator=g)
    dst = torch.randint(0, NODES, (NODES * 8,), generator=g)
    adj_list = [[] for _ in range(NODES)]
    for s, d in zip(src.tolist(), dst.tolist()):
        adj_list[d].append(s)
    deg = torch.bincount(dst, minlength=NODES).clamp(min=1).float()
    norm = torch.sparse_coo_tensor(torch.stack([dst, src]), 1.0 / deg[dst], (NODES, NODES))
    return adj_list, norm.coalesce()


class SAGE(nn.Module):
    def __init__(self):
        super().__init__()
        self.self1, self.neigh1 = nn.Linear(FEATS, 64), nn.Linear(FEATS, 64)
        self.out = nn.Linear(64, CLASSES)

    def forward(self, x_self, x_neigh):
        return self.out(torch.relu(self.self1(x_self) + self.neigh1(x_neigh)))


def make_train_fn(model, opt, x, y, adj_list, norm):
    neigh_all = torch.sparse.mm(norm, x) if FIXED else None  # the features do not train

    def train_fn(nodes):
        if FIXED:
            neigh = neigh_all[nodes]
        else:
            rows = []
            for v in nodes.tolist():
                nb = adj_list[v]
                rows.append(x[nb].mean(0) if nb else torch.zeros(FEATS))
            neigh = torch.stack(rows)
        loss = nn.functional.cross_entropy(model(x[nodes], neigh), y[nodes])
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach()

    return train_fn


def run_epoch(fn, loader):
    losses = [fn(batch) for batch in loader]
    return float(torch.stack(losses).mean())


def node_loader(g, batch_size=256):
    perm = torch.randperm(NODES, generator=g)
    return list(perm.split(batch_size))


if __name__ == "__main__":
    g = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    adj_list, norm = random_graph(g)
    x = torch.randn(NODES, FEATS, generator=g)
    y = torch.randint(0, CLASSES, (NODES,), generator=g)
    model = SAGE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    train_fn = make_train_fn(model, opt, x, y, adj_list, norm)
    for epoch in range(8):
        print(epoch, run_epoch(train_fn, node_loader(g)))
