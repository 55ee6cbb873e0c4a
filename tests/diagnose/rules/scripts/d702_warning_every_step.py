"""Reports every step through `warnings.warn` (shown every time: `simplefilter("always")`), with
the loss and a few predictions formatted into the message: logging by another name."""

import warnings

import torch
from torch import nn


def main():
    warnings.simplefilter("always")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(60):
        x = torch.randn(64, 16)
        y = torch.randint(0, 4, (64,))
        optimizer.zero_grad()
        out = model(x)
        loss = nn.functional.cross_entropy(out, y)
        loss.backward()
        optimizer.step()
        warnings.warn(f"step {step}: loss={loss} probs={out.softmax(1)[:4]}", stacklevel=1)


if __name__ == "__main__":
    main()
