"""A PointNet-style classifier of point clouds (generated shapes: spheres, cubes, cylinders with
noise). A shared per-point MLP, then a symmetric pooling over the points.

Planted: the pooling is written as a Python loop over the points (`torch.maximum` of the running
feature with each point's feature): 256 tiny ops forward and as many backward per step.
--fixed: one `amax` over the point axis.
"""

import math
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def make_clouds(n, points=256):
    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, 3, (n,), generator=g)
    u = torch.rand(n, points, 3, generator=g) * 2 - 1
    sphere = u / u.norm(dim=-1, keepdim=True)
    cube = u.clamp(-0.7, 0.7)
    angle = u[..., :1] * math.pi
    cylinder = torch.cat([angle.cos(), angle.sin(), u[..., 2:]], -1)
    clouds = torch.where(
        labels[:, None, None] == 0, sphere, torch.where(labels[:, None, None] == 1, cube, cylinder)
    )
    return clouds + 0.02 * torch.randn(clouds.shape, generator=g), labels


class PointNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.point_mlp = nn.Sequential(nn.Linear(3, 64), nn.ReLU(), nn.Linear(64, 128))
        self.head = nn.Sequential(nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 3))

    def forward(self, pts):
        feats = self.point_mlp(pts)  # (B, N, 128)
        if FIXED:
            pooled = feats.amax(dim=1)
        else:
            pooled = feats[:, 0]
            for i in range(1, feats.shape[1]):
                pooled = torch.maximum(pooled, feats[:, i])
        return self.head(pooled)


if __name__ == "__main__":
    torch.manual_seed(0)
    clouds, labels = make_clouds(512)
    model = PointNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for idx in torch.randperm(len(clouds)).split(32):
            loss = nn.functional.cross_entropy(model(clouds[idx]), labels[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
