"""A small U-Net segmenter (two down, two up, skip connections) on synthetic blobs. The trainer
keeps a running Dice score for the epoch summary: `self.running_dice += dice` where `dice` is the
differentiable soft Dice of the batch (also part of the loss), so the running sum chains every
step's graph to the next.

Planted: a running sum that keeps every step's autograd graph alive (memory grows each step).
--fixed: `self.running_dice += dice.detach()`.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(),
                         nn.Conv2d(cout, cout, 3, padding=1), nn.ReLU())


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.d1, self.d2, self.mid = block(1, 16), block(16, 32), block(32, 64)
        self.u2, self.c2 = nn.ConvTranspose2d(64, 32, 2, stride=2), block(64, 32)
        self.u1, self.c1 = nn.ConvTranspose2d(32, 16, 2, stride=2), block(32, 16)
        self.head = nn.Conv2d(16, 1, 1)

    def forward(self, x):
        s1 = self.d1(x)
        s2 = self.d2(nn.functional.max_pool2d(s1, 2))
        m = self.mid(nn.functional.max_pool2d(s2, 2))
        y = self.c2(torch.cat([self.u2(m), s2], 1))
        y = self.c1(torch.cat([self.u1(y), s1], 1))
        return self.head(y)


def soft_dice(logits, mask, eps=1.0):
    p = logits.sigmoid()
    inter = (p * mask).sum((1, 2, 3))
    return ((2 * inter + eps) / (p.sum((1, 2, 3)) + mask.sum((1, 2, 3)) + eps)).mean()


def blobs(n, size=32):
    yy, xx = torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij")
    centers = torch.rand(n, 2, 1, 1) * size
    radius = 4 + torch.rand(n, 1, 1) * 6
    mask = (((yy - centers[:, 0]) ** 2 + (xx - centers[:, 1]) ** 2) < radius ** 2).float()
    return (mask + 0.3 * torch.randn(n, size, size))[:, None], mask[:, None]


class SegTrainer:
    def __init__(self):
        self.model = UNet()
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.running_dice = 0.0

    def epoch(self, images, masks):
        self.running_dice, n = 0.0, 0
        for idx in torch.randperm(len(images)).split(16):
            logits = self.model(images[idx])
            dice = soft_dice(logits, masks[idx])
            loss = nn.functional.binary_cross_entropy_with_logits(logits, masks[idx]) + 1 - dice
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            self.running_dice += dice.detach() if FIXED else dice
            n += 1
        return float(self.running_dice) / n


def main():
    torch.manual_seed(0)
    images, masks = blobs(640)
    trainer = SegTrainer()
    for epoch in range(2):
        print(epoch, trainer.epoch(images, masks))


if __name__ == "__main__":
    main()
