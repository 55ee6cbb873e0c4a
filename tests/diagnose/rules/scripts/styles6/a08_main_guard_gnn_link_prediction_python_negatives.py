"""Everything under `if __name__ == "__main__":`, no functions: graph link prediction on a
synthetic community graph with a 2-layer GCN encoder (normalized adjacency as a sparse
tensor) and a dot-product decoder, positive edges against sampled negative edges.

Planted: negatives are drawn pair by pair in Python, rejecting existing edges through a set of
tuples, 2048 pairs each step. --fixed: drawn as one tensor (collisions are rare and kept).
"""

import random
import sys

import torch
from torch import nn

if __name__ == "__main__":
    FIXED = "--fixed" in sys.argv
    torch.manual_seed(0)
    random.seed(0)
    N, COMM, HID = 3000, 30, 64
    comm = torch.randint(0, COMM, (N,))
    src = torch.randint(0, N, (40000,))
    dst = torch.randint(0, N, (40000,))
    keep = (comm[src] == comm[dst]) | (torch.rand(40000) < 0.05)
    edges = torch.stack([src[keep], dst[keep]])
    edge_set = set(map(tuple, edges.T.tolist()))
    both = torch.cat([edges, edges.flip(0), torch.arange(N).repeat(2, 1)], 1)
    deg = torch.bincount(both[0], minlength=N).float()
    w = deg[both[0]].rsqrt() * deg[both[1]].rsqrt()
    adj = torch.sparse_coo_tensor(both, w, (N, N)).coalesce()
    feats = torch.randn(N, 32) + nn.functional.one_hot(comm, COMM).float() @ torch.randn(COMM, 32)

    lin1, lin2 = nn.Linear(32, HID), nn.Linear(HID, HID)
    opt = torch.optim.Adam(list(lin1.parameters()) + list(lin2.parameters()), lr=0.01)
    B = 2048
    for step in range(200):
        h = torch.relu(torch.sparse.mm(adj, lin1(feats)))
        z = torch.sparse.mm(adj, lin2(h))
        pos = edges[:, torch.randint(0, edges.shape[1], (B,))]
        if FIXED:
            neg = torch.randint(0, N, (2, B))
        else:
            pairs = []
            while len(pairs) < B:
                a, b = random.randrange(N), random.randrange(N)
                if a != b and (a, b) not in edge_set:
                    pairs.append((a, b))
            neg = torch.tensor(pairs).T
        pos_logit = (z[pos[0]] * z[pos[1]]).sum(-1)
        neg_logit = (z[neg[0]] * z[neg[1]]).sum(-1)
        logits = torch.cat([pos_logit, neg_logit])
        target = torch.cat([torch.ones(B), torch.zeros(B)])
        loss = nn.functional.binary_cross_entropy_with_logits(logits, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 50 == 0:
            print(step, round(loss.item(), 4))
