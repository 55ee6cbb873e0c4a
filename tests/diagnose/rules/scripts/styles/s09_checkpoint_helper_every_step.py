"""Checkpoints through a helper function, called after every optimizer step.

Planted: save_checkpoint() (torch.save of model + optimizer state) every step. --fixed: once per
epoch.
"""

import os
import sys
import tempfile

import torch
from torch import nn


def save_checkpoint(state, directory, name="last.pt"):
    path = os.path.join(directory, name)
    torch.save(state, path)
    return path


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(4))
        self.classifier = nn.Linear(16 * 16, 10)
        self.extra = nn.Linear(512, 512)  # parameters that make the checkpoint heavy

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


def main():
    every_step = "--fixed" not in sys.argv
    torch.manual_seed(0)
    digits = torch.rand(1536, 1, 16, 16)
    classes = torch.randint(0, 10, (1536,))
    cnn = ConvNet()
    adam = torch.optim.Adam(cnn.parameters(), lr=1e-3, foreach=True)
    with tempfile.TemporaryDirectory() as ckpt_dir:
        for epoch in range(4):
            for step, (img, cls) in enumerate(zip(digits.split(64), classes.split(64))):
                adam.zero_grad()
                nn.functional.cross_entropy(cnn(img), cls).backward()
                adam.step()
                if every_step:
                    save_checkpoint({"model": cnn.state_dict(), "optim": adam.state_dict(),
                                     "epoch": epoch, "step": step}, ckpt_dir)
            save_checkpoint({"model": cnn.state_dict(), "epoch": epoch}, ckpt_dir,
                            f"epoch{epoch}.pt")


if __name__ == "__main__":
    main()
