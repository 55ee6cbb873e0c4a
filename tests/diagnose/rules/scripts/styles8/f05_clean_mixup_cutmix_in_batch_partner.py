"""Clean: mixup and cutmix alternating by batch, the partner being the same batch in shuffled
order, soft targets with label smoothing; a conv net fed by a DataLoader with two persistent
workers over a Dataset that adds noise per sample."""

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

CLASSES = 4


class Noisy(Dataset):
    def __init__(self, n=4096):
        g = torch.Generator().manual_seed(0)
        self.labels = torch.randint(0, CLASSES, (n,), generator=g)
        self.base = torch.randn(CLASSES, 3, 16, 16, generator=g)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.base[self.labels[i]] + 0.4 * torch.randn(3, 16, 16), self.labels[i]


if __name__ == "__main__":
    torch.manual_seed(0)
    loader = DataLoader(
        Noisy(), batch_size=128, shuffle=True, num_workers=2, persistent_workers=True
    )
    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(32, 32, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(32, CLASSES),
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    for epoch in range(2):
        for step, (x, y) in enumerate(loader):
            perm = torch.randperm(len(x))
            lam = float(torch.distributions.Beta(1.0, 1.0).sample())
            if step % 2:
                mixed = lam * x + (1 - lam) * x[perm]
            else:
                mixed = x.clone()
                cut = int(16 * (1 - lam) ** 0.5)
                mixed[:, :, :cut, :cut] = x[perm][:, :, :cut, :cut]
                lam = 1 - cut * cut / 256
            out = model(mixed)
            loss = lam * criterion(out, y) + (1 - lam) * criterion(out, y[perm])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
