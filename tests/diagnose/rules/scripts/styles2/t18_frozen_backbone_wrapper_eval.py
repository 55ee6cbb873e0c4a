"""Fine-tuning: a wrapper class freezes the 'pretrained' backbone and calls self.eval() in its
constructor to freeze BatchNorm statistics; the training loop never calls train(), so the new
head (with Dropout) trains in eval mode too.

Planted: the whole model trains in eval mode. --fixed: train() puts the head in train mode and
keeps the backbone in eval mode (the usual pattern).
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class FineTuner(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(32, 256), nn.BatchNorm1d(256), nn.ReLU(),
                                      nn.Linear(256, 256), nn.BatchNorm1d(256), nn.ReLU())
        self.backbone.requires_grad_(False)
        self.head = nn.Sequential(nn.Dropout(0.5), nn.Linear(256, 256), nn.ReLU(),
                                  nn.Dropout(0.5), nn.Linear(256, 3))
        self.eval()

    def train(self, mode=True):
        super().train(mode)
        self.backbone.eval()
        return self

    def forward(self, x):
        return self.head(self.backbone(x))


def main():
    torch.manual_seed(0)
    x, y = torch.randn(6000, 32), torch.randint(0, 3, (6000,))
    model = FineTuner()
    opt = torch.optim.SGD(model.head.parameters(), lr=0.05, momentum=0.9, foreach=True)
    for epoch in range(3):
        if FIXED:
            model.train()
        for xb, yb in zip(x.split(100), y.split(100)):
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"epoch {epoch}: {loss.item():.3f}")


if __name__ == "__main__":
    main()
