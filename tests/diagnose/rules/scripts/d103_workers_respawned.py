"""Lightning-style module and a small fit loop; the loader starts new workers every epoch."""

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class NoisyFeatures(Dataset):
    """Features with a little per-sample augmentation (jitter)."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i] + 0.01 * torch.randn(self.x.shape[1]), self.y[i]


class LitClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 3))
        self.loss_fn = nn.CrossEntropyLoss()

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return self.loss_fn(self(x), y)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def fit(module, loader, max_epochs):
    optimizer = module.configure_optimizers()
    for epoch in range(max_epochs):
        module.train()
        for batch_idx, batch in enumerate(loader):
            optimizer.zero_grad()
            loss = module.training_step(batch, batch_idx)
            loss.backward()
            optimizer.step()


def main():
    torch.manual_seed(0)
    x = torch.randn(256, 20)
    y = torch.randint(0, 3, (256,))
    loader = DataLoader(NoisyFeatures(x, y), batch_size=64, shuffle=True, num_workers=2)
    fit(LitClassifier(), loader, max_epochs=10)


if __name__ == "__main__":
    main()
