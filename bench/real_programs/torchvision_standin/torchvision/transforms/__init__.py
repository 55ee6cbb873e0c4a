"""The transforms public scripts compose most (PIL in, tensor out), written from their docs."""

from __future__ import annotations

import random

import numpy as np
import torch
from PIL import Image, ImageEnhance


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


class ToPILImage:
    """A CHW float tensor in [0, 1], or an HWC uint8 NumPy array (World Models' frames), as
    torchvision takes both."""

    def __call__(self, tensor):
        if isinstance(tensor, np.ndarray):
            array = tensor
            if array.ndim == 3 and array.shape[2] == 1:
                array = array[..., 0]
            return Image.fromarray(np.ascontiguousarray(array))
        array = (tensor.detach().clamp(0, 1) * 255).round().byte().numpy()
        if array.ndim == 3:
            array = array.transpose(1, 2, 0)
            if array.shape[2] == 1:
                array = array[..., 0]
        return Image.fromarray(np.ascontiguousarray(array))


class RandomResizedCrop:
    """A random crop of 8%-100% of the area, aspect 3/4-4/3, resized to `size`."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3), **kwargs):
        self.size = (size, size) if isinstance(size, int) else tuple(size)
        self.scale, self.ratio = scale, ratio

    def __call__(self, image):
        w, h = image.size
        for _ in range(10):
            area = w * h * random.uniform(*self.scale)
            aspect = random.uniform(*self.ratio)
            cw, ch = int(round((area * aspect) ** 0.5)), int(round((area / aspect) ** 0.5))
            if 0 < cw <= w and 0 < ch <= h:
                left, top = random.randint(0, w - cw), random.randint(0, h - ch)
                image = image.crop((left, top, left + cw, top + ch))
                break
        return image.resize((self.size[1], self.size[0]), Image.BILINEAR)


class ColorJitter:
    """Brightness, contrast and saturation jitter (PIL's enhancers); hue is left as is."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        self.factors = [(ImageEnhance.Brightness, brightness), (ImageEnhance.Contrast, contrast),
                        (ImageEnhance.Color, saturation)]  # fmt: skip

    def __call__(self, image):
        for enhancer, amount in self.factors:
            if amount:
                image = enhancer(image).enhance(random.uniform(max(0, 1 - amount), 1 + amount))
        return image


class RandomApply:
    def __init__(self, transforms, p=0.5):
        self.transforms, self.p = transforms, p

    def __call__(self, x):
        if random.random() < self.p:
            for t in self.transforms:
                x = t(x)
        return x


class RandomGrayscale:
    def __init__(self, p=0.1):
        self.p = p

    def __call__(self, image):
        if random.random() < self.p:
            return image.convert("L").convert(image.mode)
        return image
