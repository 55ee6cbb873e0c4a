"""A Keras-like nn.Module with its own `fit()` and `evaluate()` methods; `evaluate` runs under
no_grad but never switches the module to eval mode, so Dropout and BatchNorm stay in train mode
(the reported accuracy is noisy and the BatchNorm statistics move on validation data).

Planted: evaluation in train mode. --fixed: evaluate() calls self.eval() and self.train() after.
"""

import sys

import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self, fixed=False):
        super().__init__()
        self.fixed = fixed
        self.body = nn.Sequential(nn.Linear(40, 256), nn.BatchNorm1d(256), nn.ReLU(),
                                  nn.Dropout(0.3), nn.Linear(256, 256), nn.ReLU(),
                                  nn.Dropout(0.3), nn.Linear(256, 4))

    def forward(self, x):
        return self.body(x)

    @torch.no_grad()
    def evaluate(self, x, y):
        if self.fixed:
            self.eval()
        acc = (self(x).argmax(1) == y).float().mean()
        if self.fixed:
            self.train()
        return acc

    def fit(self, x, y, vx, vy, epochs=3, batch=100):
        opt = torch.optim.Adam(self.parameters(), lr=1e-3)
        for epoch in range(epochs):
            for i in range(0, len(x), batch):
                loss = nn.functional.cross_entropy(self(x[i:i + batch]), y[i:i + batch])
                opt.zero_grad()
                loss.backward()
                opt.step()
            print(f"epoch {epoch}: val acc {self.evaluate(vx, vy).item():.3f}")


if __name__ == "__main__":
    torch.manual_seed(0)
    x, y = torch.randn(3000, 40), torch.randint(0, 4, (3000,))
    vx, vy = torch.randn(1000, 40), torch.randint(0, 4, (1000,))
    Classifier(fixed="--fixed" in sys.argv).fit(x, y, vx, vy)
