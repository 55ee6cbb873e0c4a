"""A clean control: a streaming `IterableDataset` that shards its samples across workers with
`get_worker_info()` and synthesises each one (a smoothed noise field) in one persistent worker
(this machine's spare core), batches of 64, a small conv regressor. Nothing is planted;
`--fixed` runs the same program.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, IterableDataset, get_worker_info


class FieldStream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, stride = (info.id, info.num_workers) if info else (0, 1)
        for i in range(start, self.n, stride):
            g = torch.Generator().manual_seed(i)
            field = torch.randn(1, 1, 32, 32, generator=g)
            field = nn.functional.avg_pool2d(field, 3, stride=1, padding=1)
            yield field[0], field.std().reshape(1)


if __name__ == "__main__":
    torch.manual_seed(0)
    loader = DataLoader(FieldStream(6000), batch_size=64, num_workers=1, persistent_workers=True)
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 32, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(32, 1),
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        for field, target in loader:
            loss = nn.functional.mse_loss(model(field), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
