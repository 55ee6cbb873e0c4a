"""A graph convolutional network on a generated citation-like graph, with the normalised
adjacency as a `torch.sparse_coo_tensor` and `torch.sparse.mm` for message passing (full-batch
node classification). The run's contexts are listed in a config and entered with
`contextlib.ExitStack` (a timer, a "safe numerics" context).

Planted: the config's context list includes `torch.autograd.detect_anomaly` (added while a NaN
was hunted): every training step runs with anomaly detection on. --fixed: not in the list.
"""

import contextlib
import sys
import time

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


@contextlib.contextmanager
def timer(name):
    start = time.perf_counter()
    yield
    print(f"{name}: {time.perf_counter() - start:.1f}s")


CONFIG = {
    "contexts": [lambda: timer("fit")] + ([] if FIXED else [torch.autograd.detect_anomaly]),
    "hidden": 64,
    "epochs": 300,
}


def normalised_adjacency(n, edges):
    loops = torch.arange(n)
    src = torch.cat([edges[0], edges[1], loops])
    dst = torch.cat([edges[1], edges[0], loops])
    deg = torch.zeros(n).index_add_(0, src, torch.ones(len(src)))
    w = deg[src].rsqrt() * deg[dst].rsqrt()
    return torch.sparse_coo_tensor(torch.stack([src, dst]), w, (n, n)).coalesce()


class GCN(nn.Module):
    def __init__(self, fin, hidden, classes):
        super().__init__()
        self.l1, self.l2 = nn.Linear(fin, hidden), nn.Linear(hidden, classes)

    def forward(self, adj, x):
        h = torch.relu(torch.sparse.mm(adj, self.l1(x)))
        return torch.sparse.mm(adj, self.l2(nn.functional.dropout(h, 0.5, self.training)))


if __name__ == "__main__":
    torch.manual_seed(0)
    n = 3000
    edges = torch.randint(0, n, (2, 12000))
    feats = torch.randn(n, 128)
    labels = torch.randint(0, 7, (n,))
    adj = normalised_adjacency(n, edges)
    train_mask = torch.rand(n) < 0.3
    model = GCN(128, CONFIG["hidden"], 7)
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    with contextlib.ExitStack() as stack:
        for make in CONFIG["contexts"]:
            stack.enter_context(make())
        for epoch in range(CONFIG["epochs"]):
            out = model(adj, feats)
            loss = nn.functional.cross_entropy(out[train_mask], labels[train_mask])
            opt.zero_grad()
            loss.backward()
            opt.step()
            if epoch % 100 == 0:
                print(epoch, float(loss))
