"""A conv net that flattens with .view(): fine in NCHW, a crash once activations are channels_last."""

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.head = nn.Linear(8 * 8 * 8, 4)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        return self.head(x.view(x.size(0), -1))


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(20):
    inputs, targets = torch.randn(16, 3, 8, 8), torch.randint(0, 4, (16,))
    loss = nn.functional.cross_entropy(model(inputs), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
