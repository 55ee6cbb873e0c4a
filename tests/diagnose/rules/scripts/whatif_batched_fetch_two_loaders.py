"""Two in-memory training loaders zipped: the one with the longer wait indexes a tensor one sample
at a time with a __getitem__ that takes only an int (a list of indices cannot fetch its batch), the
other is a TensorDataset (it can). The batched-fetch what-if must time the second, and say so."""

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, TensorDataset


class Rows(Dataset):
    def __init__(self, x):
        self.x = x

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[int(i)]  # int(): one row per call, never a batch


def main():
    torch.manual_seed(0)
    features = torch.randn(8192, 32)
    rows = DataLoader(Rows(features), batch_size=256, shuffle=True)
    pairs = DataLoader(TensorDataset(features, features[:, 0]), batch_size=64, shuffle=True)
    model = nn.Linear(32, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(3):
        for x, (x2, y2) in zip(rows, pairs, strict=False):
            optimizer.zero_grad()
            loss = model(x).pow(2).mean() + (model(x2).squeeze(1) - y2).pow(2).mean()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
