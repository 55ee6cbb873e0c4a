"""Seed 003's synthetic problem: predict a checkerboard from the pixel coordinates.

`grid` and `checker` are the seed's functions with explicit (height, width) dimensions. The data
set serves square crops of the coordinate grid and the matching checkerboard patch, so the loop
sees ordinary (input, target) batches; the full board is a single (val) item.
"""

from __future__ import annotations

import torch
from torch.utils.data import Dataset


def grid(height: int, width: int) -> torch.Tensor:
    """(2, height, width): x then y coordinate of every pixel, each in [0, 1)."""
    hrange = torch.arange(width).unsqueeze(0).repeat([height, 1]).div(width)
    vrange = torch.arange(height).unsqueeze(1).repeat([1, width]).div(height)
    return torch.stack([hrange, vrange], 0)


def checker(height: int, width: int, freq: int) -> torch.Tensor:
    """(height, width) of 0./1.: `freq` squares along each side."""
    hrange = torch.arange(width).reshape([1, width]).mul(freq / width / 2.0).fmod(1.0).gt(0.5)
    vrange = torch.arange(height).reshape([height, 1]).mul(freq / height / 2.0).fmod(1.0).gt(0.5)
    return hrange.logical_xor(vrange).float()


class CheckerboardCrops(Dataset):
    """`count` crops of side `crop` (crop == side: the whole board each time)."""

    def __init__(
        self, side: int = 64, freq: int = 4, crop: int = 32, count: int = 64, seed: int = 0
    ):
        if not 1 <= crop <= side:
            raise ValueError(f"crop must be between 1 and side={side}, got {crop}")
        self.inputs = grid(side, side)
        self.targets = checker(side, side, freq).unsqueeze(0)
        generator = torch.Generator().manual_seed(seed)
        self.offsets = torch.randint(0, side - crop + 1, (count, 2), generator=generator)
        self.crop = crop

    def __len__(self) -> int:
        return len(self.offsets)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        top, left = self.offsets[index].tolist()
        window = (slice(None), slice(top, top + self.crop), slice(left, left + self.crop))
        return self.inputs[window], self.targets[window]
