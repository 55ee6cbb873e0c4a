"""A Keras-like `Model` wrapper written by the author: `compile(optimizer, loss, metrics)`, then
`fit(x, y, epochs, batch_size, validation_split)` with a `History` of per-epoch logs, and
`evaluate()`. A wide MLP regressor on synthetic tabular data.

Planted: the wrapper's `train_on_batch` clears gradients with `zero_grad(set_to_none=False)`
("keep the buffers allocated, it is faster"), so every step fills every gradient with zeros.
--fixed: `zero_grad()` (gradients set to None).
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class History:
    def __init__(self):
        self.history = {}

    def log(self, logs):
        for key, value in logs.items():
            self.history.setdefault(key, []).append(value)


class KerasLike:
    def __init__(self, net):
        self.net = net
        self.optimizer = self.loss_fn = None
        self.metrics = []

    def compile(self, optimizer, loss, metrics=()):
        self.optimizer, self.loss_fn, self.metrics = optimizer, loss, list(metrics)

    def train_on_batch(self, xb, yb):
        self.net.train()
        if FIXED:
            self.optimizer.zero_grad()
        else:
            self.optimizer.zero_grad(set_to_none=False)
        loss = self.loss_fn(self.net(xb), yb)
        loss.backward()
        self.optimizer.step()
        return loss.detach()

    def evaluate(self, x, y, batch_size=1024):
        self.net.eval()
        total = torch.zeros(())
        with torch.no_grad():
            for i in range(0, len(x), batch_size):
                total += self.loss_fn(self.net(x[i : i + batch_size]), y[i : i + batch_size]) * len(
                    x[i : i + batch_size]
                )
        return (total / len(x)).item()

    def fit(self, x, y, epochs=1, batch_size=32, validation_split=0.0, verbose=1):
        history = History()
        n_val = int(len(x) * validation_split)
        x_train, y_train, x_val, y_val = x[n_val:], y[n_val:], x[:n_val], y[:n_val]
        for epoch in range(epochs):
            order = torch.randperm(len(x_train))
            running = torch.zeros(())
            for i in range(0, len(order), batch_size):
                idx = order[i : i + batch_size]
                running += self.train_on_batch(x_train[idx], y_train[idx])
            logs = {"loss": running.item() / max(1, len(order) // batch_size)}
            if n_val:
                logs["val_loss"] = self.evaluate(x_val, y_val)
            history.log(logs)
            if verbose:
                print(
                    f"Epoch {epoch + 1}/{epochs} - "
                    + " - ".join(f"{k}: {v:.4f}" for k, v in logs.items())
                )
        return history


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(4096, 64)
    y = x @ torch.randn(64, 1) + 0.1 * torch.randn(4096, 1)
    net = nn.Sequential(
        nn.Linear(64, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1)
    )
    model = KerasLike(net)
    model.compile(torch.optim.SGD(net.parameters(), lr=1e-3, momentum=0.9), nn.MSELoss())
    hist = model.fit(x, y, epochs=2, batch_size=32, validation_split=0.1)
    print(hist.history["val_loss"][-1])
