"""A clean program: active learning with uncertainty sampling; the pool is scored in eval mode
under `torch.inference_mode()` once per round, and the model trains on the growing labelled set
(mini-batches of 64). --fixed: same program.
"""

import torch
from torch import nn


@torch.inference_mode()
def acquire(model, pool_x, k):
    model.eval()
    p = torch.cat([model(c).softmax(-1) for c in pool_x.split(2000)])
    model.train()
    return (-(p * p.clamp_min(1e-9).log()).sum(-1)).topk(k).indices


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(10000, 32)
    y = (x[:, 0] * x[:, 1] > 0).long()
    labelled, pool = torch.arange(300), torch.arange(300, len(x))
    model = nn.Sequential(nn.Linear(32, 512), nn.ReLU(), nn.Dropout(0.1), nn.Linear(512, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for rnd in range(10):
        for epoch in range(3):
            for idx in labelled[torch.randperm(len(labelled))].split(64):
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
