"""Prints the loss tensor and a batch of predictions after every step."""

import torch
from torch import nn


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.CrossEntropyLoss()
    for step in range(60):
        x = torch.randn(64, 16)
        y = torch.randint(0, 4, (64,))
        optimizer.zero_grad()
        out = model(x)
        loss = criterion(out, y)
        loss.backward()
        optimizer.step()
        print(f"step {step}: loss={loss} preds={out.argmax(1)} probs={out.softmax(1)[:4]}")


if __name__ == "__main__":
    main()
