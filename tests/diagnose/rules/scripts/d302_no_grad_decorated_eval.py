"""D302 through a decorator: the evaluation function is decorated with `@torch.no_grad()` and
never calls `model.eval()`, so Dropout stays active while the validation set is scored (the
decorator's wrapper is the code every no_grad-decorated function shares: update_bn's too)."""

import torch
from torch import nn


@torch.no_grad()
def evaluate(model, x, y):
    return float((model(x).argmax(-1) == y).float().mean())


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(2048, 32)
    y = (x[:, 0] > 0).long()
    model = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Dropout(0.3), nn.Linear(128, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(300):
        idx = torch.randint(0, 1536, (64,))
        loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 5 == 4:
            print(step, evaluate(model, x[1536:], y[1536:]))
