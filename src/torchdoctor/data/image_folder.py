"""An image-folder data set without torchvision: `root/<class>/<image>` -> (CHW float tensor, label).

Matches what seed 000 builds with `datasets.ImageFolder(root, transforms.Compose([Resize((64,
64)), ToTensor()]))`: classes are the sorted sub-folder names, images are converted to RGB, resized
(bilinear), and scaled to float32 in [0, 1].
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch
from PIL import Image
from torch.utils.data import Dataset

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp", ".tif", ".tiff")


class ImageFolder(Dataset):
    def __init__(self, root: str | os.PathLike, size: int | tuple[int, int] = 64):
        self.root = Path(root)
        if not self.root.is_dir():
            raise FileNotFoundError(f"image folder not found: {self.root}")
        self.size = (size, size) if isinstance(size, int) else tuple(size)
        self.classes = sorted(p.name for p in self.root.iterdir() if p.is_dir())
        if not self.classes:
            raise FileNotFoundError(f"no class folders in {self.root}")
        self.class_to_idx = {name: index for index, name in enumerate(self.classes)}
        self.samples = [
            (path, self.class_to_idx[name])
            for name in self.classes
            for path in sorted((self.root / name).iterdir())
            if path.suffix.lower() in IMAGE_SUFFIXES
        ]
        self.targets = [label for _, label in self.samples]

    def __len__(self) -> int:
        return len(self.samples)

    def load_array(self, index: int) -> np.ndarray:
        """The image as resized HWC uint8, the form seed 001's Dataset keeps in memory."""
        path, _ = self.samples[index]
        with Image.open(path) as image:
            image = image.convert("RGB")
            if image.size != self.size[::-1]:
                image = image.resize(self.size[::-1], Image.BILINEAR)
            return np.array(image, dtype=np.uint8)  # a writable copy for from_numpy

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        array = self.load_array(index)
        # from_numpy shares memory (no copy); one division in float32, not float64.
        tensor = torch.from_numpy(array).permute(2, 0, 1).float().div_(255.0)
        return tensor, self.samples[index][1]


def load_arrays(folder: ImageFolder) -> tuple[np.ndarray, np.ndarray]:
    """All images as one (N, H, W, 3) uint8 array and labels as (N,) int64."""
    images = np.stack([folder.load_array(i) for i in range(len(folder))])
    return images, np.asarray(folder.targets, dtype=np.int64)
