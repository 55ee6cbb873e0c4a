"""Clean: a Keras-style `compile()`/`fit()` wrapper over in-memory tensors, batches cut by
indexing (no per-sample fetch), gradients cleared every step, loss read once per epoch.
`--fixed` changes nothing.
"""

import torch
from torch import nn


class Model(nn.Sequential):
    def compile(self, optimizer, loss):
        self.optimizer = optimizer(self.parameters())
        self.loss_fn = loss

    def fit(self, x, y, epochs, batch_size):
        for epoch in range(epochs):
            for idx in torch.randperm(len(x)).split(batch_size):
                self.optimizer.zero_grad()
                loss = self.loss_fn(self(x[idx]), y[idx])
                loss.backward()
                self.optimizer.step()
            print("epoch", epoch, float(loss))


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(8192, 64)
    y = x @ torch.randn(64, 1)
    model = Model(nn.Linear(64, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 1))
    model.compile(optimizer=lambda p: torch.optim.Adam(p, lr=1e-3), loss=nn.functional.mse_loss)
    model.fit(x, y, epochs=3, batch_size=256)
