"""A loop that keeps a running history of predictions by concatenating it every step: each step
copies everything seen so far, so step time (and memory) grow with the step index."""

import torch
from torch import nn
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, TensorDataset


def main():
    torch.manual_seed(0)
    x = torch.randn(8192, 64)
    y = torch.randint(0, 4, (8192,))
    data = TensorDataset(x, y)
    loader = DataLoader(data, batch_size=None,
                        sampler=BatchSampler(RandomSampler(data), 128, drop_last=True))
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    criterion = nn.CrossEntropyLoss()
    history = torch.empty(0, 64)
    for xb, yb in loader:
        optimizer.zero_grad(set_to_none=True)
        loss = criterion(model(xb), yb)
        loss.backward()
        optimizer.step()
        features = xb.repeat(256, 1)  # a per-step record, 8 MiB: the copy soon outweighs the step
        history = torch.cat([history, features])  # copies the whole history every step
        drift = history.mean(dim=0).norm()
        if drift > 1e3:
            print("drift")


if __name__ == "__main__":
    main()
