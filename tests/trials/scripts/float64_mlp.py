"""Planted problem: the whole model and its data run in float64 (NumPy's default dtype)."""

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

# One intra-op thread: on a CI machine shared by many jobs, two OpenMP threads spin-wait for each
# other and the step time measures the neighbours, not float64 vs float32.
torch.set_num_threads(1)

features = np.random.randn(2048, 512)  # float64, as NumPy makes it
labels = np.random.randint(0, 10, size=2048)
dataset = TensorDataset(torch.tensor(features), torch.tensor(labels))
loader = DataLoader(dataset, batch_size=256, shuffle=True)

model = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 512), nn.ReLU(),
                      nn.Linear(512, 10)).double()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()

for epoch in range(5):
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
