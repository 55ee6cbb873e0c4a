"""In-memory image data sets built from uint8 arrays, converted once and indexed cheaply."""

from __future__ import annotations

import numpy as np
import torch
from torch.utils.data import Dataset


class ImageArrayDataset(Dataset):
    """(N, H, W, C) uint8 images + (N,) labels -> (CHW float32 in [0, 1], int64 label).

    The whole array is converted once, vectorised (from_numpy shares memory, one float32 pass),
    instead of per item in float64 as seed 001's Dataset does; __getitem__ only indexes.
    """

    def __init__(self, images: np.ndarray, labels: np.ndarray, classes=None):
        if images.ndim != 4 or images.dtype != np.uint8:
            raise ValueError("images must be a (N, H, W, C) uint8 array")
        if len(images) != len(labels):
            raise ValueError(f"{len(images)} images but {len(labels)} labels")
        self.images = torch.from_numpy(images).permute(0, 3, 1, 2).float().div_(255.0)
        self.labels = torch.from_numpy(np.asarray(labels, dtype=np.int64))
        self.classes = list(classes) if classes is not None else None

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.images[index], self.labels[index]
