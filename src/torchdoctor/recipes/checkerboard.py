"""`checkerboard`: seed 003 — 1x1 convolutions with BatchNorm learn a checkerboard from pixel
coordinates; a regression (MSE), so no accuracy is reported."""

from __future__ import annotations

import torch
from torch import nn

from torchdoctor.data.checkerboard import CheckerboardCrops
from torchdoctor.models.pointwise import pointwise_net
from torchdoctor.recipes.base import Recipe


def recipe(
    side: int = 64,
    freq: int = 2,
    crop: int = 32,
    count: int = 256,
    width: int = 64,
    lr: float = 1e-2,
    seed: int = 0,
) -> Recipe:
    """width 256 is the seed's network; side/freq: board size and squares per side."""
    torch.manual_seed(seed)
    return Recipe(
        name="checkerboard",
        model=pointwise_net(width=width),
        train_data=CheckerboardCrops(side, freq, crop=crop, count=count, seed=seed),
        val_data=CheckerboardCrops(side, freq, crop=side, count=1, seed=seed),
        loss_fn=nn.MSELoss(),
        optimizer=lambda params: torch.optim.Adam(params, lr=lr),
        defaults={"batch_size": 16, "epochs": 5},
        classification=False,
    )
