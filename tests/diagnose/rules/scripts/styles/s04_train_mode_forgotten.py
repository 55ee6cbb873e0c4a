"""evaluate() switches the model to eval(); the training loop never switches it back.

Planted: no model.train() at the start of each epoch, so every epoch after the first trains with
Dropout and BatchNorm in eval mode. --fixed: classifier.train() at the start of each epoch.
"""

import sys

import torch
from torch import nn


def evaluate(classifier, val_x, val_y):
    classifier.eval()
    with torch.no_grad():
        return (classifier(val_x).argmax(-1) == val_y).float().mean().item()


def main():
    fixed = "--fixed" in sys.argv[1:]
    torch.manual_seed(0)
    inputs = torch.randn(1600, 48)
    targets = (inputs[:, 0] * inputs[:, 1] > 0).long()
    classifier = nn.Sequential(nn.Linear(48, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Dropout(0.3),
                               nn.Linear(256, 2))
    sgd = torch.optim.SGD(classifier.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(12):
        if fixed:
            classifier.train()
        for xb, yb in zip(inputs[:1280].split(160), targets[:1280].split(160)):
            sgd.zero_grad()
            nn.functional.cross_entropy(classifier(xb), yb).backward()
            sgd.step()
        print(epoch, evaluate(classifier, inputs[1280:], targets[1280:]))


if __name__ == "__main__":
    main()
