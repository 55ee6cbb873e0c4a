"""A wide model trained with Adam on small batches: the optimizer's two moments (twice the
parameters) are most of the memory the step holds; activations are tiny."""

import torch
from torch import nn
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, TensorDataset


def main():
    torch.manual_seed(0)
    x = torch.randn(1024, 1024)
    y = torch.randint(0, 8, (1024,))
    data = TensorDataset(x, y)
    loader = DataLoader(data, batch_size=None,
                        sampler=BatchSampler(RandomSampler(data), 16, drop_last=True))
    model = nn.Sequential(nn.Linear(1024, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(),
                          nn.Linear(2048, 8))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    criterion = nn.CrossEntropyLoss()
    for xb, yb in loader:
        optimizer.zero_grad(set_to_none=True)
        loss = criterion(model(xb), yb)
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
