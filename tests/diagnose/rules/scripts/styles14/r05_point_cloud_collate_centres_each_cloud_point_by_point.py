"""Point clouds (lists of (x, y, z) tuples, as a text-format reader would give them) batched by
a `collate_fn` that centres and scales each cloud before stacking.

Planted: the collate centres and scales each cloud point by point in Python (three passes over
the tuples), then converts the nested lists: the batch assembly is Python per point.
--fixed: each cloud becomes an array once, when the dataset is read; the collate centres and
scales the stacked batch with array operations.
"""

import sys

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


class Clouds(Dataset):
    def __init__(self, n=2000, points=256):
        rng = np.random.default_rng(0)
        self.clouds = [
            [tuple(p) for p in (rng.standard_normal((points, 3)) * (1 + i % 3)).tolist()]
            for i in range(n)
        ]
        self.labels = [i % 3 for i in range(n)]
        if FIXED:  # converted once, when the records are read
            self.clouds = [np.asarray(cloud, dtype=np.float32) for cloud in self.clouds]

    def __len__(self):
        return len(self.clouds)

    def __getitem__(self, i):
        return self.clouds[i], self.labels[i]


def collate_python(batch):
    out = []
    for cloud, _ in batch:
        n = len(cloud)
        cx = sum(p[0] for p in cloud) / n
        cy = sum(p[1] for p in cloud) / n
        cz = sum(p[2] for p in cloud) / n
        centred = [(p[0] - cx, p[1] - cy, p[2] - cz) for p in cloud]
        scale = max((q[0] ** 2 + q[1] ** 2 + q[2] ** 2) ** 0.5 for q in centred)
        out.append([[c / scale for c in q] for q in centred])
    return torch.tensor(out), torch.tensor([label for _, label in batch])


def collate_arrays(batch):
    clouds = np.stack([cloud for cloud, _ in batch])
    clouds -= clouds.mean(1, keepdims=True)
    clouds /= np.linalg.norm(clouds, axis=-1).max(1)[:, None, None]
    return torch.from_numpy(clouds), torch.tensor([label for _, label in batch])


if __name__ == "__main__":
    torch.manual_seed(0)
    loader = DataLoader(
        Clouds(),
        batch_size=32,
        shuffle=True,
        collate_fn=collate_arrays if FIXED else collate_python,
    )
    model = nn.Sequential(nn.Linear(3, 64), nn.ReLU(), nn.Linear(64, 64))
    head = nn.Linear(64, 3)
    opt = torch.optim.Adam([*model.parameters(), *head.parameters()], lr=1e-3)
    for epoch in range(2):
        for pts, y in loader:
            loss = nn.functional.cross_entropy(head(model(pts).amax(1)), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
