"""Sharpness-aware minimization (SAM) inlined in the loop of a small CNN on generated 32x32
images: backward at the weights, perturb by rho * g / |g|, backward again at the perturbed
weights, undo the perturbation, optimizer step.

Planted: the loop clears the gradients right after the second backward ("ready for the next
step") and only then undoes the perturbation and calls `optimizer.step()`: the step sees no
gradients (set to None) and the weights never change after the first step.
--fixed: step first, then zero_grad.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv

if __name__ == "__main__":
    torch.manual_seed(0)
    images = torch.randn(4000, 3, 32, 32)
    labels = (images[:, 0].mean((1, 2)) > 0).long()
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(32, 2))
    params = list(model.parameters())
    optimizer = torch.optim.SGD(params, lr=0.05, momentum=0.9)
    rho = 0.05
    for step in range(300):
        idx = torch.randint(0, len(images), (64,))
        xb, yb = images[idx], labels[idx]
        nn.functional.cross_entropy(model(xb), yb).backward()
        with torch.no_grad():
            norm = torch.norm(torch.stack([p.grad.norm() for p in params])) + 1e-12
            eps = [rho * p.grad / norm for p in params]
            for p, e in zip(params, eps):
                p.add_(e)
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        if not FIXED:
            optimizer.zero_grad()
        with torch.no_grad():
            for p, e in zip(params, eps):
                p.sub_(e)
        optimizer.step()
        if FIXED:
            optimizer.zero_grad()
        if step % 100 == 0:
            print(step, float(loss))
