"""Clean: a PointNet classifier with a vectorised max-pool over points, the clouds split with
`random_split` into train and validation `Subset`s whose indices are used to slice the tensors
directly (no per-sample fetch); validation per epoch under `inference_mode` in eval mode.
`--fixed` changes nothing.
"""

import torch
from torch import nn
from torch.utils.data import random_split

if __name__ == "__main__":
    torch.manual_seed(0)
    clouds = torch.randn(3072, 256, 3) * torch.tensor([1.0, 0.5, 0.2])
    labels = (clouds[..., 0].abs().mean(1) > 0.8).long()
    train_part, val_part = random_split(
        range(len(clouds)), [2560, 512], generator=torch.Generator().manual_seed(0)
    )
    train_idx, val_idx = torch.tensor(train_part.indices), torch.tensor(val_part.indices)
    point_mlp = nn.Sequential(nn.Linear(3, 64), nn.ReLU(), nn.Linear(64, 128))
    head = nn.Sequential(nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 2))
    opt = torch.optim.Adam([*point_mlp.parameters(), *head.parameters()], lr=1e-3)
    for epoch in range(3):
        point_mlp.train(), head.train()
        for idx in train_idx[torch.randperm(len(train_idx))].split(32):
            loss = nn.functional.cross_entropy(head(point_mlp(clouds[idx]).amax(1)), labels[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        point_mlp.eval(), head.eval()
        with torch.inference_mode():
            acc = (
                (head(point_mlp(clouds[val_idx]).amax(1)).argmax(1) == labels[val_idx])
                .float()
                .mean()
            )
        print("epoch", epoch, float(loss), float(acc))
