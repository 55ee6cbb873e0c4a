"""A voxel-occupancy classifier of point clouds: each cloud is turned into an occupancy grid
(8x8x8) in the training loop, then a 3-D conv net classifies the grid.

Planted: the occupancy grid is built in the training loop with Python: a dict keyed by the
voxel index tuple of every point of every cloud (`int(...)` per coordinate), then a grid filled
from the dict: per-point Python work every step.
--fixed: the voxel indices are computed with tensor ops and the grid filled with one
`index_put_`.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
G = 8


def voxelize_python(clouds):
    grids = torch.zeros(len(clouds), 1, G, G, G)
    for b, cloud in enumerate(clouds.tolist()):
        occupied = {}
        for x, y, z in cloud:
            key = (
                min(G - 1, int((x + 1) / 2 * G)),
                min(G - 1, int((y + 1) / 2 * G)),
                min(G - 1, int((z + 1) / 2 * G)),
            )
            occupied[key] = occupied.get(key, 0) + 1
        for (i, j, k), count in occupied.items():
            grids[b, 0, i, j, k] = count
    return grids


def voxelize_tensor(clouds):
    ijk = ((clouds + 1) / 2 * G).long().clamp(0, G - 1)
    b = torch.arange(len(clouds))[:, None].expand(-1, clouds.shape[1])
    grids = torch.zeros(len(clouds), G, G, G)
    grids.index_put_((b.reshape(-1), *ijk.reshape(-1, 3).T), torch.ones(b.numel()), accumulate=True)
    return grids[:, None]


if __name__ == "__main__":
    torch.manual_seed(0)
    clouds = (torch.rand(2048, 256, 3) * 2 - 1) * torch.rand(2048, 1, 3)
    labels = (clouds.abs().amax(1).argmax(1)).long()
    model = nn.Sequential(
        nn.Conv3d(1, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool3d(2),
        nn.Flatten(),
        nn.Linear(16 * 64, 3),
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    voxelize = voxelize_tensor if FIXED else voxelize_python
    for epoch in range(2):
        for idx in torch.randperm(len(clouds)).split(32):
            loss = nn.functional.cross_entropy(model(voxelize(clouds[idx])), labels[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
