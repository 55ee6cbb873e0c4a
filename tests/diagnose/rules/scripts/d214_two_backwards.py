"""Multi-task loss: one backward per head through the shared trunk, the graph retained between."""

import torch
from torch import nn


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(64, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU())
        self.cls = nn.Linear(512, 10)
        self.reg = nn.Linear(512, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.cls(h), self.reg(h)


def main():
    torch.manual_seed(0)
    model = TwoHeads()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(200):
        x = torch.randn(128, 64)
        labels, values = torch.randint(0, 10, (128,)), torch.randn(128, 1)
        logits, pred = model(x)
        opt.zero_grad()
        nn.functional.cross_entropy(logits, labels).backward(retain_graph=True)
        nn.functional.mse_loss(pred, values).backward()
        opt.step()


if __name__ == "__main__":
    main()
