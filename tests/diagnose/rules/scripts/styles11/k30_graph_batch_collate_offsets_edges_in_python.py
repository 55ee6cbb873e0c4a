"""Graph classification with a PyG-like batching: each sample is a small graph (node features
and an edge list), and the collate function merges a list of graphs into one big disconnected
graph (nodes concatenated, edge indices offset, a `batch` vector telling which graph each node
belongs to). A message-passing network with `index_add_` and mean pooling per graph.

Planted: the collate offsets the edges and builds the batch vector element by element in Python
(`for (src, dst) in edges: rows.append(src + offset)` ..., `batch_vec += [g] * n`), then calls
`torch.tensor` on the lists. --fixed: per graph `edge_index + offset` and
`torch.full((n,), g)`, then `torch.cat`.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


class Graphs(Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(0)
        self.items = []
        for _ in range(n):
            nodes = int(torch.randint(20, 60, (1,), generator=g))
            edges = torch.randint(0, nodes, (2, nodes * 3), generator=g)
            x = torch.randn(nodes, 16, generator=g)
            self.items.append((x, edges, int(edges[0].float().mean() > nodes / 2)))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def collate(graphs):
    xs, offset = [], 0
    if FIXED:
        edges, batch_vec = [], []
        for g, (x, e, _) in enumerate(graphs):
            xs.append(x)
            edges.append(e + offset)
            batch_vec.append(torch.full((len(x),), g))
            offset += len(x)
        edge_index, batch = torch.cat(edges, 1), torch.cat(batch_vec)
    else:
        rows, cols, batch_list = [], [], []
        for g, (x, e, _) in enumerate(graphs):
            xs.append(x)
            for src, dst in e.t().tolist():
                rows.append(src + offset)
                cols.append(dst + offset)
            batch_list += [g] * len(x)
            offset += len(x)
        edge_index, batch = torch.tensor([rows, cols]), torch.tensor(batch_list)
    y = torch.tensor([label for _, _, label in graphs])
    return torch.cat(xs), edge_index, batch, y


class MPNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2, self.out = nn.Linear(16, 64), nn.Linear(64, 64), nn.Linear(64, 2)

    def forward(self, x, edge_index, batch, graphs):
        h = torch.relu(self.l1(x))
        for _ in range(2):
            msg = torch.zeros_like(h).index_add_(0, edge_index[1], h[edge_index[0]])
            h = torch.relu(self.l2(h + msg))
        pooled = torch.zeros(graphs, h.shape[1]).index_add_(0, batch, h)
        return self.out(pooled)


if __name__ == "__main__":
    torch.manual_seed(0)
    loader = DataLoader(Graphs(3000), batch_size=64, shuffle=True, collate_fn=collate)
    model = MPNN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        for x, edge_index, batch, y in loader:
            loss = nn.functional.cross_entropy(model(x, edge_index, batch, len(y)), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
