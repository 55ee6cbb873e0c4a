"""An engine module (`train_one_epoch(model, loader, optimizer, epoch)` and `evaluate(model,
loader)`) for point-cloud segmentation-free classification; the Dataset stores 256-point
clouds and returns 32 points per sample chosen by farthest point sampling.

Planted: `__getitem__` runs farthest point sampling point by point in Python (a loop over the
32 picks, each updating distances with per-point Python math over NumPy rows). --fixed: the
sampling runs on whole arrays (the distance update vectorized).
"""

import sys

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv
PICK = 32


class Clouds(Dataset):
    def __init__(self, n, seed):
        rng = np.random.default_rng(seed)
        self.labels = rng.integers(0, 4, n)
        pts = rng.normal(size=(n, 256, 3)).astype(np.float32)
        scale = np.array([[1, 1, 1], [3, 1, 1], [1, 3, 0.3], [2, 2, 2]], np.float32)
        self.points = pts * scale[self.labels][:, None, :]

    def __len__(self):
        return len(self.labels)

    def fps(self, pts):
        chosen = [0]
        dist = np.full(len(pts), np.inf, np.float32)
        for _ in range(PICK - 1):
            last = pts[chosen[-1]]
            if FIXED:
                dist = np.minimum(dist, ((pts - last) ** 2).sum(1))
            else:
                for j in range(len(pts)):
                    d = (pts[j, 0] - last[0]) ** 2 + (pts[j, 1] - last[1]) ** 2 + (
                        pts[j, 2] - last[2]) ** 2
                    if d < dist[j]:
                        dist[j] = d
            chosen.append(int(dist.argmax()))
        return pts[chosen]

    def __getitem__(self, i):
        return torch.from_numpy(self.fps(self.points[i])), int(self.labels[i])


class PointNetCls(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Conv1d(3, 64, 1), nn.ReLU(), nn.Conv1d(64, 128, 1),
                                 nn.ReLU())
        self.head = nn.Linear(128, 4)

    def forward(self, pts):
        return self.head(self.mlp(pts.transpose(1, 2)).amax(-1))


def train_one_epoch(model, loader, optimizer, epoch):
    model.train()
    for i, (pts, y) in enumerate(loader):
        loss = nn.functional.cross_entropy(model(pts), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i % 20 == 0:
            print(f"epoch {epoch} it {i} loss {loss.item():.3f}")


@torch.inference_mode()
def evaluate(model, loader):
    model.eval()
    hits = sum(int((model(p).argmax(1) == y).sum()) for p, y in loader)
    return hits / len(loader.dataset)


def main():
    torch.manual_seed(0)
    train = DataLoader(Clouds(640, 0), batch_size=16, shuffle=True)
    val = DataLoader(Clouds(64, 1), batch_size=32)
    model = PointNetCls()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        train_one_epoch(model, train, opt, epoch)
        print("acc", evaluate(model, val))


if __name__ == "__main__":
    main()
