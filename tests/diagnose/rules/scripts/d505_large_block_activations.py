"""A model whose wide middle block keeps most of the activations: every elementwise layer of
`trunk` saves a (batch, 2048) tensor for backward, while the parameters are small."""

import torch
from torch import nn
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(32, 2048)
        self.trunk = nn.Sequential(
            nn.GELU(), nn.LayerNorm(2048), nn.Tanh(), nn.SiLU(), nn.LayerNorm(2048), nn.Sigmoid()
        )
        self.head = nn.Linear(2048, 4)

    def forward(self, x):
        return self.head(self.trunk(self.stem(x)))


def main():
    torch.manual_seed(0)
    x = torch.randn(4096, 32)
    y = torch.randint(0, 4, (4096,))
    data = TensorDataset(x, y)
    loader = DataLoader(data, batch_size=None,
                        sampler=BatchSampler(RandomSampler(data), 1024, drop_last=True))
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(4):
        for xb, yb in loader:
            optimizer.zero_grad(set_to_none=True)
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
