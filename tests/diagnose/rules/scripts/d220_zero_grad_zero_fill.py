"""A wide model trained on tiny batches, its gradients zero-filled every step."""

import torch
from torch import nn


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                          nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, foreach=True)
    x, y = torch.randn(2048, 1024), torch.randint(0, 10, (2048,))
    for epoch in range(2):
        for i in range(0, len(x), 2):
            loss = nn.functional.cross_entropy(model(x[i:i + 2]), y[i:i + 2])
            optimizer.zero_grad(set_to_none=False)
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
