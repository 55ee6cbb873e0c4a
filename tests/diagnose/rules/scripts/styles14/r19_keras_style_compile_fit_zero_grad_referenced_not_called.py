"""A Keras-style wrapper: `model.compile(optimizer=..., loss=...)` stores the pieces and
`model.fit(x, y, epochs, batch_size)` runs the loop. A VAE-free plain regressor.

Planted: `fit` writes `self.optimizer.zero_grad` without the call parentheses: the attribute is
looked up and nothing is cleared, so every step adds its gradients to all the previous ones.
--fixed: `self.optimizer.zero_grad()`.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Sequential(nn.Sequential):
    def compile(self, optimizer, loss):
        self.optimizer = optimizer(self.parameters())
        self.loss_fn = loss

    def fit(self, x, y, epochs, batch_size):
        history = []
        for epoch in range(epochs):
            for idx in torch.randperm(len(x)).split(batch_size):
                if FIXED:
                    self.optimizer.zero_grad()
                else:
                    self.optimizer.zero_grad  # noqa: B018
                loss = self.loss_fn(self(x[idx]), y[idx])
                loss.backward()
                self.optimizer.step()
            history.append(float(loss))
            print("epoch", epoch, history[-1])
        return history


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(4096, 32)
    y = x @ torch.randn(32, 1)
    model = Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 1))
    model.compile(optimizer=lambda p: torch.optim.SGD(p, lr=1e-3), loss=nn.functional.mse_loss)
    model.fit(x, y, epochs=4, batch_size=64)
