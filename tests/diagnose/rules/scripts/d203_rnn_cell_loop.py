"""A sequence model that steps an nn.LSTMCell over time in Python, one call per time step."""

import torch
from torch import nn


class Sequence(nn.Module):
    def __init__(self, size=16):
        super().__init__()
        self.size = size
        self.cell = nn.LSTMCell(1, size)
        self.head = nn.Linear(size, 1)

    def forward(self, series):
        h = series.new_zeros(series.size(0), self.size)
        c = series.new_zeros(series.size(0), self.size)
        outputs = []
        for value in series.split(1, dim=1):  # one Python iteration per time step
            h, c = self.cell(value, (h, c))
            outputs.append(self.head(h))
        return torch.cat(outputs, dim=1)


def main():
    torch.manual_seed(0)
    t = torch.arange(200.0)
    series = torch.sin(t / 8 + torch.rand(16, 1) * 6)
    model = Sequence()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for step in range(40):
        optimizer.zero_grad()
        loss = (model(series[:, :-1]) - series[:, 1:]).pow(2).mean()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
