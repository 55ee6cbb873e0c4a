"""Generated stand-ins for MNIST, FashionMNIST, CIFAR10, STL10, FakeData and CelebA (PIL images, int
labels; CelebA: 40 binary attributes)."""

from __future__ import annotations

import os

import numpy as np
import torch
from PIL import Image


class _Generated(torch.utils.data.Dataset):
    size: tuple[int, ...] = (28, 28)
    mode = "L"
    classes = [str(i) for i in range(10)]

    def __init__(self, root=None, train=True, download=False, transform=None,
                 target_transform=None, length=None):  # fmt: skip
        # a script that splits the training set into fixed sizes (55000 + 5000) names them in
        # the corpus's env: TORCHVISION_STANDIN_SIZES="60000,10000" (train, test)
        sizes = os.environ.get("TORCHVISION_STANDIN_SIZES", "6000,1000").split(",")
        n = length or int(sizes[0] if train else sizes[1])
        rng = np.random.default_rng(0 if train else 1)
        self.targets = torch.as_tensor(rng.integers(0, len(self.classes), n))
        # class-dependent mean so a model can learn something
        base = rng.integers(0, 256, (len(self.classes), *self.size), dtype=np.uint8)
        noise = rng.integers(0, 64, (n, *self.size), dtype=np.uint8)
        self.data = (base[self.targets.numpy()] // 2 + noise).astype(np.uint8)
        self.transform, self.target_transform = transform, target_transform

    def __len__(self) -> int:
        return len(self.targets)

    def __getitem__(self, index):
        pixels = self.data[index]
        pixels = pixels.numpy() if isinstance(pixels, torch.Tensor) else pixels
        image = Image.fromarray(pixels, mode=self.mode)
        target = int(self.targets[index])
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target


class MNIST(_Generated):
    """Like torchvision's: `data` is a uint8 tensor (N, 28, 28), `targets` a tensor."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.data = torch.from_numpy(self.data)


class FashionMNIST(MNIST):
    pass


class CIFAR10(_Generated):
    size = (32, 32, 3)
    mode = "RGB"

    @property
    def train_data(self):
        """torchvision 0.2's name for `data` (programs written for it read it: MishaLaskin/vqvae)."""
        return self.data


class STL10(_Generated):
    """96x96 RGB images, 10 classes; `split` as torchvision names it ("train+unlabeled": the
    training stand-in)."""

    size = (96, 96, 3)
    mode = "RGB"

    def __init__(self, root=None, split="train", folds=None, transform=None,
                 target_transform=None, download=False):  # fmt: skip
        super().__init__(root, train=split != "test", download=download, transform=transform,
                         target_transform=target_transform)  # fmt: skip


class FakeData(torch.utils.data.Dataset):
    """Like torchvision's: each image drawn when read, from its index's seed (pytorch/examples
    imagenet's `--dummy` asks for 1281167 images of 224x224: never held at once)."""

    def __init__(self, size=1000, image_size=(3, 64, 64), num_classes=10, transform=None,
                 target_transform=None, random_offset=0):  # fmt: skip
        self.length, self.image_size, self.num_classes = size, image_size, num_classes
        self.random_offset = random_offset
        self.transform, self.target_transform = transform, target_transform

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index):
        rng = np.random.default_rng(index + self.random_offset)
        target = int(rng.integers(0, self.num_classes))
        channels, height, width = self.image_size
        pixels = rng.integers(0, 256, (height, width, channels), dtype=np.uint8)
        image = Image.fromarray(pixels.squeeze(2) if channels == 1 else pixels)
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target


class CelebA(_Generated):
    """64x64 RGB faces' stand-in (the real images are 178x218; programs resize and crop them) with
    40 binary attributes as the target."""

    size = (64, 64, 3)
    mode = "RGB"

    def __init__(self, root=None, split="train", target_type="attr", transform=None,
                 target_transform=None, download=False):  # fmt: skip
        super().__init__(root, split != "test", download, transform, target_transform, 2000)
        attributes = np.random.default_rng(2).integers(0, 2, (len(self.targets), 40))
        self.attr = torch.as_tensor(attributes)

    def __getitem__(self, index):
        image, _ = super().__getitem__(index)
        return image, self.attr[index]


class ImageFolder(torch.utils.data.Dataset):
    """`root/<class>/<image>` files, read with PIL as RGB (a corpus stand-in writes them:
    standins.image_folder); classes sorted by folder name, as torchvision's."""

    extensions = (".png", ".jpg", ".jpeg", ".bmp")

    def __init__(self, root, transform=None, target_transform=None, **kwargs):
        self.classes = sorted(e.name for e in os.scandir(root) if e.is_dir())
        self.class_to_idx = {name: i for i, name in enumerate(self.classes)}
        self.samples = [
            (os.path.join(root, name, file), self.class_to_idx[name])
            for name in self.classes
            for file in sorted(os.listdir(os.path.join(root, name)))
            if file.lower().endswith(self.extensions)
        ]
        self.targets = [target for _, target in self.samples]
        self.transform, self.target_transform = transform, target_transform

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, index):
        path, target = self.samples[index]
        with open(path, "rb") as f:
            image = Image.open(f).convert("RGB")
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target
