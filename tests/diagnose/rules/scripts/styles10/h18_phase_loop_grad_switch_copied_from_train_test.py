"""A phase loop in the style of the classic transfer-learning tutorial: `for phase in
("train", "val")`, `model.train(phase == "train")`, and the forward inside
`torch.set_grad_enabled(...)`, with the optimiser step only in the train phase. A small CNN on
generated images, a validation split as large as the training split.

Planted: the grad switch `torch.set_grad_enabled(phase != "test")` was copied from a script
whose phases were "train" and "test": here the phases are "train" and "val", so the validation
phase records autograd graphs for every batch it never back-propagates. --fixed:
`torch.set_grad_enabled(phase == "train")`.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv

if __name__ == "__main__":
    torch.manual_seed(0)
    data = {"train": (torch.randn(1024, 3, 32, 32), torch.randint(0, 5, (1024,))),
            "val": (torch.randn(2048, 3, 32, 32), torch.randint(0, 5, (2048,)))}
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 5))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for epoch in range(3):
        for phase in ("train", "val"):
            model.train(phase == "train")
            x, y = data[phase]
            correct = 0
            for start in range(0, len(x), 64):
                grad_on = phase == "train" if FIXED else phase != "test"
                with torch.set_grad_enabled(grad_on):
                    out = model(x[start : start + 64])
                    loss = nn.functional.cross_entropy(out, y[start : start + 64])
                if phase == "train":
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                correct += (out.argmax(1) == y[start : start + 64]).sum().item()
            print(epoch, phase, correct / len(x))
