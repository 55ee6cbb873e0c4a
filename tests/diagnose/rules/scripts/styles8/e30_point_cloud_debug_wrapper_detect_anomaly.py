"""A PointNet-like classifier of synthetic point clouds (spheres, cubes and cylinders sampled
with jitter and random rotation): a shared per-point MLP, max pooling over points, a classifier
head; a `train(cfg)` function called from `main()` through a small `run_safely` helper that
turns NaN losses into a clear message.

Planted: `run_safely` wraps the whole training in `torch.autograd.detect_anomaly()` ("so that a
NaN shows where it came from") and nobody took it out: every backward runs with anomaly
checking. --fixed: `run_safely` checks the loss for NaN only.
"""

import contextlib
import math
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
POINTS = 256


def sample_shapes(n, g):
    labels = torch.randint(0, 3, (n,), generator=g)
    pts = torch.rand(n, POINTS, 3, generator=g) * 2 - 1
    sphere = pts / pts.norm(dim=2, keepdim=True)
    cube = pts.clone()
    face = torch.randint(0, 3, (n, POINTS), generator=g)
    cube.scatter_(2, face[..., None], torch.sign(pts.gather(2, face[..., None])))
    angle = pts[..., :1] * math.pi
    cylinder = torch.cat([angle.cos(), angle.sin(), pts[..., 2:]], 2)
    clouds = torch.where(
        labels[:, None, None] == 0, sphere, torch.where(labels[:, None, None] == 1, cube, cylinder)
    )
    theta = torch.rand(n, generator=g) * 2 * math.pi
    rot = torch.zeros(n, 3, 3)
    rot[:, 0, 0], rot[:, 0, 1], rot[:, 1, 0], rot[:, 1, 1], rot[:, 2, 2] = (
        theta.cos(),
        -theta.sin(),
        theta.sin(),
        theta.cos(),
        1,
    )
    return clouds @ rot + 0.02 * torch.randn(n, POINTS, 3, generator=g), labels


class PointNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.point_mlp = nn.Sequential(nn.Linear(3, 64), nn.ReLU(), nn.Linear(64, 128), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 3))

    def forward(self, pts):
        return self.head(self.point_mlp(pts).max(1).values)


def train(cfg):
    g = torch.Generator().manual_seed(0)
    clouds, labels = sample_shapes(cfg["n"], g)
    model = PointNet()
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    for epoch in range(cfg["epochs"]):
        for idx in torch.randperm(len(clouds)).split(cfg["batch_size"]):
            loss = nn.functional.cross_entropy(model(clouds[idx]), labels[idx])
            if torch.isnan(loss):
                raise FloatingPointError("loss is NaN")
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())


def run_safely(fn, *args):
    guard = contextlib.nullcontext() if FIXED else torch.autograd.detect_anomaly()
    try:
        with guard:
            return fn(*args)
    except FloatingPointError as exc:
        sys.exit(f"training diverged: {exc}")


def main():
    torch.manual_seed(0)
    run_safely(train, {"n": 4000, "lr": 1e-3, "epochs": 2, "batch_size": 32})


if __name__ == "__main__":
    main()
