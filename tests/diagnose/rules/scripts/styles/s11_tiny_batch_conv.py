"""Small conv net on image-shaped data, trained with a batch of 2.

Planted: --batch-size defaults to 2. --fixed: a batch of 128.
"""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def build():
    return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 16, 3, padding=1),
                         nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch-size", type=int, default=2)
    p.add_argument("--fixed", action="store_true")
    a = p.parse_args()
    bs = 128 if a.fixed else a.batch_size
    torch.manual_seed(0)
    images, labels = torch.rand(1024, 3, 16, 16), torch.randint(0, 10, (1024,))
    loader = DataLoader(TensorDataset(images, labels), batch_size=bs, shuffle=True)
    cnn = build()
    opt = torch.optim.SGD(cnn.parameters(), lr=0.01 * bs / 128, momentum=0.9)
    crit = nn.CrossEntropyLoss()
    for _ in range(3):
        for img, lab in loader:
            opt.zero_grad()
            crit(cnn(img), lab).backward()
            opt.step()


if __name__ == "__main__":
    main()
