"""A graph network over a generated molecule-like batch of graphs: message passing with
`index_add_` (messages summed at their target nodes), six layers, a graph-level readout with
`index_add_` over a graph index. The model takes a `memory_efficient` flag.

Planted: `memory_efficient=True` wraps every message-passing layer in
`torch.utils.checkpoint.checkpoint(..., use_reentrant=False)`: each layer's forward runs twice
per step on a model and batch that take a few MB. --fixed: `memory_efficient=False`.
"""

import sys

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

FIXED = "--fixed" in sys.argv


class MessageLayer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.msg = nn.Linear(2 * dim, dim)
        self.upd = nn.GRUCell(dim, dim)

    def forward(self, h, src, dst):
        m = torch.relu(self.msg(torch.cat([h[src], h[dst]], 1)))
        agg = torch.zeros_like(h).index_add_(0, dst, m)
        return self.upd(agg, h)


class GraphNet(nn.Module):
    def __init__(self, dim=64, layers=6, memory_efficient=True):
        super().__init__()
        self.embed = nn.Linear(8, dim)
        self.layers = nn.ModuleList(MessageLayer(dim) for _ in range(layers))
        self.out = nn.Linear(dim, 1)
        self.memory_efficient = memory_efficient

    def forward(self, feats, src, dst, graph, graphs):
        h = self.embed(feats)
        for layer in self.layers:
            if self.memory_efficient:
                h = checkpoint(layer, h, src, dst, use_reentrant=False)
            else:
                h = layer(h, src, dst)
        pooled = torch.zeros(graphs, h.shape[1]).index_add_(0, graph, h)
        return self.out(pooled).squeeze(1)


def random_batch(g, graphs=32, nodes=20, edges=40):
    feats = torch.randn(graphs * nodes, 8, generator=g)
    offs = torch.arange(graphs).repeat_interleave(edges) * nodes
    src = torch.randint(0, nodes, (graphs * edges,), generator=g) + offs
    dst = torch.randint(0, nodes, (graphs * edges,), generator=g) + offs
    graph = torch.arange(graphs).repeat_interleave(nodes)
    target = feats[:, 0].view(graphs, nodes).mean(1)
    return feats, src, dst, graph, target


if __name__ == "__main__":
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    data = [random_batch(g) for _ in range(60)]
    model = GraphNet(memory_efficient=not FIXED)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(4):
        for feats, src, dst, graph, target in data:
            loss = nn.functional.mse_loss(model(feats, src, dst, graph, 32), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
