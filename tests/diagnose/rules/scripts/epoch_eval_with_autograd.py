"""An MLP whose per-epoch evaluation runs with autograd on: 32 training steps an epoch, then a
validation pass over a set as large as the training set (about a third of the run's time). With
a fixed 20 measured steps the evaluation is never reached."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    torch.manual_seed(0)
    x = torch.randn(4096, 256)
    y = (x[:, :8].sum(dim=1) > 0).long()
    train = DataLoader(TensorDataset(x[:2048], y[:2048]), batch_size=64, shuffle=True)
    val = DataLoader(TensorDataset(x[2048:], y[2048:]), batch_size=64)
    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(4):
        model.train()
        for xb, yb in train:
            optimizer.zero_grad(set_to_none=True)
            criterion(model(xb), yb).backward()
            optimizer.step()
        model.eval()
        correct = 0
        for xb, yb in val:  # no torch.no_grad(): autograd records every forward
            correct += int((model(xb).argmax(1) == yb).sum())
        print(f"epoch {epoch}: val acc {correct / 2048:.3f}")


if __name__ == "__main__":
    main()
