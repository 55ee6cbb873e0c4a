"""A loop that sums its losses into a running total without .item(): the total keeps every
step's autograd graph alive, one step more each time."""

import torch
from torch import nn
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
total_loss = 0
for step in range(40):
    x, y = torch.randn(8, 16), torch.randint(0, 2, (8,))
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    total_loss += loss  # keeps every step's graph
print(f"mean loss {float(total_loss) / 40:.3f}")
