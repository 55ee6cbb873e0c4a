"""`cifar-resnet`: seed 001 — ResNet-18 (torchvision layout, 10-class head) on CIFAR-shaped data
generated in memory (torchdoctor.data.cifar_like)."""

from __future__ import annotations

import torch
from torch import nn

from torchdoctor.data.arrays import ImageArrayDataset
from torchdoctor.data.cifar_like import CLASSES, NOISE, cifar_like
from torchdoctor.models.resnet import resnet18
from torchdoctor.recipes.base import Recipe


def recipe(
    n_train: int = 2000,
    n_val: int = 500,
    width: int = 32,
    lr: float = 1e-3,
    noise: float = NOISE,
    seed: int = 0,
) -> Recipe:
    """width 64 is torchvision's ResNet-18; the default 32 keeps a CPU epoch to seconds."""
    torch.manual_seed(seed)
    return Recipe(
        name="cifar-resnet",
        model=resnet18(num_classes=len(CLASSES), width=width),
        train_data=ImageArrayDataset(*cifar_like(n_train, seed=seed, noise=noise), CLASSES),
        val_data=ImageArrayDataset(*cifar_like(n_val, seed=seed + 1, noise=noise), CLASSES),
        loss_fn=nn.CrossEntropyLoss(),
        optimizer=lambda params: torch.optim.Adam(params, lr=lr),
        defaults={"batch_size": 32, "epochs": 3},
    )
