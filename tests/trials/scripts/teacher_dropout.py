"""Planted trap: a no_grad "teacher" forward in train mode is part of the training objective.

Dropout is active in that forward on purpose (a consistency loss), so switching it to eval mode,
as the inference_mode fix does for evaluation forwards, changes the loss.
"""

import torch
from torch import nn

torch.manual_seed(1)
inputs = torch.randn(512, 16)
model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Dropout(0.5), nn.Linear(64, 16))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

for step in range(40):
    batch = inputs[(step * 32) % 512:][:32]
    with torch.no_grad():
        target = model(batch)  # dropout noise is the point: consistency under two masks
    loss = nn.functional.mse_loss(model(batch), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
