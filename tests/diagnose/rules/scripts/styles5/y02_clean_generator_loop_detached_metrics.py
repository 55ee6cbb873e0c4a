"""CLEAN: the training loop is a generator yielding detached metrics; the caller logs every
100th step and keeps plain floats only at epoch ends. Nothing is planted (`--fixed` changes
nothing).
"""

import torch
from torch import nn


def train_steps(model, opt, x, y, epochs):
    for epoch in range(epochs):
        for idx in torch.randperm(len(x)).split(128):
            loss = nn.functional.mse_loss(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            yield epoch, loss.detach()


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 4))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(12800, 32), torch.randn(12800, 4)
    history = []
    for step, (epoch, loss) in enumerate(train_steps(model, opt, x, y, epochs=2)):
        if step % 100 == 0:
            history.append(float(loss))
    print(history[-1])


if __name__ == "__main__":
    main()
