"""FixMatch-style semi-supervised learning: each step zips a labelled batch with a larger
unlabelled batch (weak and strong augmentations of it), pseudo-labels from the weak view and a
consistency loss on the strong view. Both loaders have a worker each; `zip(labelled,
unlabelled)` ends each epoch when the shorter one does.

Planted: neither loader has `persistent_workers=True`: every epoch starts two fresh worker
processes (each re-importing torch and copying the datasets), and the epochs are short (zip
stops at the labelled set's 25 batches). --fixed: `persistent_workers=True` on both.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


class Augmenting(Dataset):
    def __init__(self, x, y=None):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        x = self.x[i]
        weak = x + 0.05 * torch.randn_like(x)
        if self.y is not None:
            return weak, self.y[i]
        strong = x * (torch.rand_like(x) > 0.3) + 0.3 * torch.randn_like(x)
        return weak, strong


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(12000, 64)
    y = (x[:, :3].sum(1) > 0).long()
    labelled = DataLoader(Augmenting(x[:800], y[:800]), batch_size=32, shuffle=True,
                          num_workers=1, persistent_workers=FIXED)
    unlabelled = DataLoader(Augmenting(x[800:]), batch_size=96, shuffle=True, num_workers=1,
                            persistent_workers=FIXED)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.03, momentum=0.9, nesterov=True)
    for epoch in range(12):
        for (xl, yl), (weak, strong) in zip(labelled, unlabelled):
            sup = nn.functional.cross_entropy(model(xl), yl)
            with torch.no_grad():
                conf, pseudo = model(weak).softmax(-1).max(-1)
            mask = (conf > 0.95).float()
            unsup = (nn.functional.cross_entropy(model(strong), pseudo, reduction="none")
                     * mask).mean()
            loss = sup + unsup
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
