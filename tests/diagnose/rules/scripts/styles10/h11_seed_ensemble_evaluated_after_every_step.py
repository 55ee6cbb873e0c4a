"""Several models trained one after another in one process: a deep-ensemble script trains five
members with different seeds, and a `track()` helper scores the ensemble built so far (the
members already trained plus the one in training) on the validation split, to plot how the
ensemble's accuracy grows. A tabular MLP on generated data.

Planted: `track()` is called after EVERY optimiser step (`track_every=1`, meant to be per
epoch): each call runs every member over 4096 validation rows, more work than the step itself.
--fixed: `track()` runs once per epoch.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def member(seed):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(40, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                         nn.Linear(256, 3))


@torch.no_grad()
def track(members, xv, yv):
    for m in members:
        m.eval()
    probs = torch.stack([m(xv).softmax(1) for m in members]).mean(0)
    members[-1].train()
    return (probs.argmax(1) == yv).float().mean().item()


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(6144, 40)
    y = (x[:, 0] > 0.5).long() + (x[:, 1] > 0).long()
    xv, yv = torch.randn(4096, 40), None
    yv = (xv[:, 0] > 0.5).long() + (xv[:, 1] > 0).long()
    steps_per_epoch = len(x) // 128
    track_every = steps_per_epoch if FIXED else 1
    members, curve = [], []
    for seed in range(5):
        model = member(seed)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        members.append(model)
        step = 0
        for epoch in range(2):
            perm = torch.randperm(len(x))
            for start in range(0, len(x), 128):
                idx = perm[start : start + 128]
                loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
                step += 1
                if step % track_every == 0:
                    curve.append(track(members, xv, yv))
        print("member", seed, "ensemble acc", curve[-1])
