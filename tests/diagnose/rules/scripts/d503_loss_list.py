"""A loop that keeps every step's loss in a list for a later plot: each loss holds its autograd
graph (and the step's activations stay reachable through it)."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    torch.manual_seed(0)
    x = torch.randn(2048, 64)
    y = torch.randint(0, 4, (2048,))
    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    criterion = nn.CrossEntropyLoss()
    losses = []
    for epoch in range(3):
        for xb, yb in loader:
            optimizer.zero_grad(set_to_none=True)
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            losses.append(loss)  # keeps the graph: should be loss.item() or loss.detach()
        print(f"epoch {epoch}: mean loss {sum(losses).item() / len(losses):.3f}")


if __name__ == "__main__":
    main()
