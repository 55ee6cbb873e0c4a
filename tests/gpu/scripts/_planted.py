"""Shared plumbing of the planted CUDA scripts: arguments, synthetic data and models.

Each script plants one GPU problem in its own training loop (the loop is where the problem
lives, so each script writes it out) and `--fixed` runs the same loop with the problem fixed.
"""

from __future__ import annotations

import argparse
import itertools

import torch
from torch import nn
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, TensorDataset


def arguments(steps: int = 200) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fixed", action="store_true", help="run the control loop (problem fixed)")
    parser.add_argument("--steps", type=int, default=steps)
    return parser.parse_args()


def images(count: int = 4096, size: int = 32) -> TensorDataset:
    """CIFAR-shaped images and labels in host memory (as a dataset read from disk would be)."""
    generator = torch.Generator().manual_seed(0)
    return TensorDataset(
        torch.randn(count, 3, size, size, generator=generator),
        torch.randint(0, 10, (count,), generator=generator),
    )


def vectors(count: int = 8192, width: int = 1024, classes: int = 16) -> TensorDataset:
    generator = torch.Generator().manual_seed(0)
    return TensorDataset(
        torch.randn(count, width, generator=generator),
        torch.randint(0, classes, (count,), generator=generator),
    )


def convnet(width: int = 64) -> nn.Module:
    """A small VGG-style conv net: convolutions dominate the step."""
    torch.manual_seed(0)
    layers: list[nn.Module] = []
    channels = 3
    for out in (width, width * 2, width * 4):
        layers += [
            nn.Conv2d(channels, out, 3, padding=1, bias=False),
            nn.BatchNorm2d(out),
            nn.ReLU(inplace=True),
            nn.Conv2d(out, out, 3, padding=1, bias=False),
            nn.BatchNorm2d(out),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
        ]
        channels = out
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(channels, 10)]
    return nn.Sequential(*layers)


def mlp(width: int = 1024, hidden: int = 4096, classes: int = 16, depth: int = 4) -> nn.Module:
    """A wide MLP: matmuls dominate the step."""
    torch.manual_seed(0)
    layers: list[nn.Module] = [nn.Linear(width, hidden), nn.GELU()]
    for _ in range(depth - 2):
        layers += [nn.Linear(hidden, hidden), nn.GELU()]
    layers.append(nn.Linear(hidden, classes))
    return nn.Sequential(*layers)


def loader(data: TensorDataset, batch_size: int, pinned: bool = True) -> DataLoader:
    """Whole batches indexed at once (a TensorDataset takes a list of indices): no per-sample
    fetch and collate, so the step is the GPU's and the planted problem is what remains."""
    sampler = BatchSampler(RandomSampler(data), batch_size=batch_size, drop_last=True)
    return DataLoader(data, batch_size=None, sampler=sampler, pin_memory=pinned)


def batches(data_loader: DataLoader, steps: int):
    """(epoch, x, y) for `steps` batches, over as many epochs as that takes."""
    seen = 0
    for epoch in itertools.count():
        for x, y in data_loader:
            if seen == steps:
                return
            seen += 1
            yield epoch, x, y
