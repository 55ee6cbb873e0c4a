"""CIFAR-shaped and checkerboard data: shapes, dtypes, determinism, the seed's functions."""

from __future__ import annotations

import numpy as np
import torch

from torchdoctor.data.arrays import ImageArrayDataset
from torchdoctor.data.checkerboard import CheckerboardCrops, checker, grid
from torchdoctor.data.cifar_like import cifar_like


def test_cifar_like_shapes_balance_and_determinism():
    images, labels = cifar_like(50, seed=3)
    assert images.shape == (50, 32, 32, 3) and images.dtype == np.uint8
    assert labels.dtype == np.int64 and np.bincount(labels).tolist() == [5] * 10
    again, _ = cifar_like(50, seed=3)
    other, _ = cifar_like(50, seed=4)
    assert np.array_equal(images, again) and not np.array_equal(images, other)


def test_image_array_dataset_converts_once_to_float32():
    images, labels = cifar_like(4)
    data = ImageArrayDataset(images, labels)
    image, label = data[1]
    assert image.shape == (3, 32, 32) and image.dtype == torch.float32
    assert torch.allclose(
        image * 255, torch.from_numpy(images[1]).permute(2, 0, 1).float(), atol=1e-3
    )
    assert label.item() == labels[1]


def test_grid_and_checker_match_the_seed_with_explicit_dims():
    coords = grid(4, 8)  # height 4, width 8
    assert coords.shape == (2, 4, 8)
    assert torch.allclose(coords[0, 0], torch.arange(8) / 8)  # x varies along the width
    assert torch.allclose(coords[1, :, 0], torch.arange(4) / 4)  # y along the height
    board = checker(8, 8, 2)
    assert board.shape == (8, 8)
    assert board[0, 0] == 0 and board[0, 7] == 1 and board[7, 0] == 1 and board[7, 7] == 0


def test_crops_are_aligned_windows():
    data = CheckerboardCrops(side=16, freq=2, crop=8, count=5, seed=1)
    inputs, targets = data[2]
    top, left = data.offsets[2].tolist()
    assert inputs.shape == (2, 8, 8) and targets.shape == (1, 8, 8)
    assert torch.equal(targets[0], checker(16, 16, 2)[top : top + 8, left : left + 8])
    assert inputs[0, 0, 0] == left / 16 and inputs[1, 0, 0] == top / 16
