"""Seed 000's model: flatten the image, one hidden layer, class logits."""

from __future__ import annotations

from torch import nn


def image_mlp(n_classes: int, image_size: int = 64, channels: int = 3, hidden: int = 64):
    return nn.Sequential(
        nn.Flatten(),
        nn.Linear(channels * image_size * image_size, hidden),
        nn.ReLU(),
        nn.Linear(hidden, n_classes),
    )
