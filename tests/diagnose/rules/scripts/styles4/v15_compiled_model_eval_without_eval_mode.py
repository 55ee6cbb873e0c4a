"""A torch.compile'd classifier with Dropout, trained in the usual loop; an `evaluate()` helper
called at the end of each epoch wraps the compiled model in torch.no_grad() but never calls
model.eval().

Planted: evaluation in train mode (Dropout active). --fixed: evaluate() switches to eval mode and
back.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def evaluate(model, batches):
    if FIXED:
        model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in batches:
            correct += (model(x).argmax(1) == y).sum().item()
            total += len(y)
    model.train()
    return correct / total


def main():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Dropout(0.25), nn.Linear(256, 256),
                        nn.ReLU(), nn.Dropout(0.25), nn.Linear(256, 3))
    model = torch.compile(net)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = torch.randn(2560, 32), torch.randint(0, 3, (2560,))
    val = list(zip(torch.randn(1024, 32).split(256), torch.randint(0, 3, (1024,)).split(256)))
    for epoch in range(4):
        for xb, yb in zip(x.split(128), y.split(128)):
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        print(f"epoch {epoch} val acc {evaluate(model, val):.3f}")


if __name__ == "__main__":
    main()
