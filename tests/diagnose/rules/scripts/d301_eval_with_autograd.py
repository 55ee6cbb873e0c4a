"""Validation every few steps, without torch.no_grad()/inference_mode()."""

import torch
from torch import nn


def evaluate(model, x_val, y_val):
    model.eval()
    correct = 0
    for i in range(0, len(x_val), 256):
        logits = model(x_val[i:i + 256])
        correct += (logits.argmax(1) == y_val[i:i + 256]).sum()
    model.train()
    return correct / len(x_val)


def main():
    torch.manual_seed(0)
    x = torch.randn(8192, 128)
    y = (x[:, 0] > 0).long()
    x_train, y_train, x_val, y_val = x[:4096], y[:4096], x[4096:], y[4096:]
    model = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    criterion = nn.CrossEntropyLoss()
    for step in range(40):
        idx = torch.randint(0, len(x_train), (128,))
        optimizer.zero_grad()
        loss = criterion(model(x_train[idx]), y_train[idx])
        loss.backward()
        optimizer.step()
        if step % 2 == 0:
            evaluate(model, x_val, y_val)


if __name__ == "__main__":
    main()
