"""Evaluation under inference_mode, but the model (with Dropout and BatchNorm) stays in train mode."""

import torch
from torch import nn


def main():
    torch.manual_seed(0)
    x = torch.randn(4096, 256)
    y = (x[:, :3].sum(1) > 0).long()
    model = nn.Sequential(nn.Linear(256, 512), nn.BatchNorm1d(512), nn.ReLU(), nn.Dropout(0.5),
                          nn.Linear(512, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    criterion = nn.CrossEntropyLoss()
    for step in range(40):
        idx = torch.randint(0, 3584, (128,))
        optimizer.zero_grad()
        loss = criterion(model(x[idx]), y[idx])
        loss.backward()
        optimizer.step()
        if step % 4 == 3:
            with torch.inference_mode():  # no model.eval(): Dropout and BatchNorm stay active
                accuracy = (model(x[3584:]).argmax(1) == y[3584:]).float().mean()


if __name__ == "__main__":
    main()
