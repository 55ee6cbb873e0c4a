"""The transforms public scripts compose most (PIL in, tensor out), written from their docs."""

from __future__ import annotations

import random

import numpy as np
import torch
from PIL import Image


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, x):
        for t in self.transforms:
            x = t(x)
        return x


class ToTensor:
    def __call__(self, image):
        array = np.asarray(image, dtype=np.float32) / 255.0
        if array.ndim == 2:
            array = array[None]
        else:
            array = array.transpose(2, 0, 1)
        return torch.from_numpy(np.ascontiguousarray(array))


class Normalize:
    def __init__(self, mean, std, inplace=False):
        self.mean = torch.as_tensor(mean).view(-1, 1, 1)
        self.std = torch.as_tensor(std).view(-1, 1, 1)

    def __call__(self, tensor):
        return (tensor - self.mean) / self.std


class Resize:
    def __init__(self, size, *args, **kwargs):
        self.size = (size, size) if isinstance(size, int) else tuple(size)

    def __call__(self, image):
        return image.resize((self.size[1], self.size[0]), Image.BILINEAR)


class CenterCrop:
    def __init__(self, size):
        self.size = (size, size) if isinstance(size, int) else tuple(size)

    def __call__(self, image):
        w, h = image.size
        th, tw = self.size
        left, top = (w - tw) // 2, (h - th) // 2
        return image.crop((left, top, left + tw, top + th))


class Pad:
    def __init__(self, padding, fill=0):
        self.padding = padding

    def __call__(self, image):
        p = self.padding
        w, h = image.size
        out = Image.new(image.mode, (w + 2 * p, h + 2 * p))
        out.paste(image, (p, p))
        return out


class RandomCrop(CenterCrop):
    def __init__(self, size, padding=None, **kwargs):
        super().__init__(size)
        self.padding = padding

    def __call__(self, image):
        if self.padding:
            image = Pad(self.padding)(image)
        w, h = image.size
        th, tw = self.size
        left, top = random.randint(0, w - tw), random.randint(0, h - th)
        return image.crop((left, top, left + tw, top + th))


class RandomHorizontalFlip:
    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, image):
        return image.transpose(Image.FLIP_LEFT_RIGHT) if random.random() < self.p else image


class Lambda:
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, x):
        return self.fn(x)
