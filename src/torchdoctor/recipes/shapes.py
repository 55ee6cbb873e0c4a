"""`shapes`: seed 000 — an MLP classifying generated shape images read from an image folder."""

from __future__ import annotations

import torch
from torch import nn

from torchdoctor.data.image_folder import ImageFolder
from torchdoctor.data.shapes import shapes_dataset
from torchdoctor.models.mlp import image_mlp
from torchdoctor.recipes.base import Recipe


def recipe(
    n_train: int = 300,
    n_val: int = 50,
    image_size: int = 64,
    hidden: int = 64,
    lr: float = 1e-3,
    seed: int = 0,
    cache_dir: str | None = None,
) -> Recipe:
    """n_train / n_val are images per class; image_size is the side the images are resized to."""
    root = shapes_dataset(
        n_train=n_train, n_val=n_val, image_size=image_size, seed=seed, cache_dir=cache_dir
    )
    train = ImageFolder(root / "train", size=image_size)
    val = ImageFolder(root / "val", size=image_size)
    torch.manual_seed(seed)
    return Recipe(
        name="shapes",
        model=image_mlp(len(train.classes), image_size=image_size, hidden=hidden),
        train_data=train,
        val_data=val,
        loss_fn=nn.CrossEntropyLoss(),
        optimizer=lambda params: torch.optim.AdamW(params, lr=lr),
        defaults={"batch_size": 32, "epochs": 5},
    )
