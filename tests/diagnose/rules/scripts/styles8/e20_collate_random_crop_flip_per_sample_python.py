"""A custom `collate_fn` that does the augmentation: random crops of each 3x40x40 image to 32x32,
random horizontal flips and a brightness jitter, applied in the collate function so that the
Dataset stays a plain lookup; a small ResNet-like classifier.

Planted: the collate function copies each cropped image into the batch pixel row by pixel row in
Python (flipping a row by reversing a list), so assembling a batch takes longer than training on
it. --fixed: crops and flips with tensor indexing and `torch.stack`.
"""

import random
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

FIXED = "--fixed" in sys.argv
CROP = 32


def augment_collate(batch):
    out = torch.empty(len(batch), 3, CROP, CROP)
    labels = torch.empty(len(batch), dtype=torch.long)
    for n, (img, label) in enumerate(batch):
        top, left = random.randint(0, 8), random.randint(0, 8)
        flip = random.random() < 0.5
        gain = random.uniform(0.8, 1.2)
        if FIXED:
            crop = img[:, top : top + CROP, left : left + CROP]
            out[n] = (crop.flip(2) if flip else crop) * gain
        else:
            for c in range(3):
                for r in range(CROP):
                    row = img[c, top + r, left : left + CROP].tolist()
                    if flip:
                        row = row[::-1]
                    out[n, c, r] = torch.tensor([v * gain for v in row])
        labels[n] = label
    return out, labels


class Block(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(ch, ch, 3, padding=1),
            nn.BatchNorm2d(ch),
            nn.ReLU(),
            nn.Conv2d(ch, ch, 3, padding=1),
            nn.BatchNorm2d(ch),
        )

    def forward(self, x):
        return torch.relu(x + self.body(x))


if __name__ == "__main__":
    torch.manual_seed(0)
    random.seed(0)
    images = torch.randn(2048, 3, 40, 40)
    labels = (images[:, 0].mean((1, 2)) > 0).long()
    loader = DataLoader(
        TensorDataset(images, labels), batch_size=32, shuffle=True, collate_fn=augment_collate
    )
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1),
        Block(16),
        nn.MaxPool2d(2),
        Block(16),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(16, 2),
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(2):
        for xb, yb in loader:
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
