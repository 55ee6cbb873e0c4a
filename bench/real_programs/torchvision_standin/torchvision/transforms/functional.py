"""`torchvision.transforms.functional`'s names that scripts import, as the stand-in's transforms."""

from __future__ import annotations

from . import Normalize, ToTensor


def to_tensor(image):
    return ToTensor()(image)


def normalize(tensor, mean, std, inplace=False):
    return Normalize(mean, std)(tensor)


def hflip(image):
    return image.flip(-1) if hasattr(image, "flip") else image.transpose(0)
