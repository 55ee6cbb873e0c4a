"""Counts correct predictions one sample at a time: a host read (`.item()`) per sample per step."""

import torch
from torch import nn


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    correct = seen = 0
    for step in range(60):
        x, y = torch.randn(32, 20), torch.randint(0, 5, (32,))
        logits = model(x)
        loss = nn.functional.cross_entropy(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        hits = logits.argmax(1) == y
        for i in range(len(y)):
            correct += hits[i].item()
        seen += len(y)
    print(f"accuracy {correct / seen:.3f}")


if __name__ == "__main__":
    main()
