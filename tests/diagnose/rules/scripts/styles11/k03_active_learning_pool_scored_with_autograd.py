"""An active-learning loop: start from 200 labelled samples, train a few epochs, score the whole
unlabelled pool by predictive entropy, move the 200 most uncertain samples to the labelled set,
repeat. An MLP on generated data.

Planted: `acquire()` scores the pool (8000 samples, in chunks) with autograd on: every chunk's
forward records a graph nobody backpropagates. --fixed: the scoring runs under
`torch.inference_mode()`.
"""

import contextlib
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def acquire(model, pool_x, k):
    scores = []
    ctx = torch.inference_mode() if FIXED else contextlib.nullcontext()
    with ctx:
        model.eval()
        for chunk in pool_x.split(1000):
            p = model(chunk).softmax(-1)
            scores.append(-(p * p.clamp_min(1e-9).log()).sum(-1))
        model.train()
    return torch.cat(scores).detach().topk(k).indices


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(10000, 32)
    y = (x[:, 0] * x[:, 1] > 0).long()
    labelled = torch.arange(200)
    pool = torch.arange(200, len(x))
    model = nn.Sequential(nn.Linear(32, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for rnd in range(12):
        for epoch in range(2):
            perm = labelled[torch.randperm(len(labelled))]
            for idx in perm.split(64):
                loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
        picked = acquire(model, x[pool], 200)
        labelled = torch.cat([labelled, pool[picked]])
        keep = torch.ones(len(pool), dtype=torch.bool)
        keep[picked] = False
        pool = pool[keep]
        print("round", rnd, len(labelled), float(loss))
