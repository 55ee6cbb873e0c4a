"""Two problems, each with a run-time fix: anomaly detection left on from a debugging session, and
AdamW's default per-tensor step over a model of many small layers (with LayerNorm)."""

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.linear = nn.Linear(width, width)

    def forward(self, x):
        return x + torch.relu(self.linear(self.norm(x)))


def main():
    torch.manual_seed(0)
    torch.autograd.set_detect_anomaly(True)  # "for now", while chasing a NaN
    model = nn.Sequential(*[Block(48) for _ in range(6)], nn.Linear(48, 4))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    x, y = torch.randn(1536, 48), torch.randint(0, 4, (1536,))
    for epoch in range(2):
        for i in range(0, len(x), 64):
            loss = nn.functional.cross_entropy(model(x[i:i + 64]), y[i:i + 64])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
