"""Two planted measurement traps: warm-up prefetch (QA F24) and random augmentation.

Each batch costs 8 x 10 ms of sleep. With loader workers, the 1 s first step (like compilation)
lets them prefetch a full queue, which the next steps consume in ~0 s: a trial must not time
those steps. Each sample also gets NumPy noise from the global generator: with workers it is drawn
in worker processes, so the losses differ although nothing about what is learned changed.
"""

import time

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class SleepyNoisyDataset(Dataset):
    def __init__(self):
        generator = torch.Generator().manual_seed(0)
        self.x = torch.randn(256, 8, generator=generator)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        time.sleep(0.010)  # decoding stand-in
        noise = torch.from_numpy(np.random.normal(0.0, 0.1, 8).astype(np.float32))
        return self.x[index] + noise, index % 2


if __name__ == "__main__":
    loader = DataLoader(SleepyNoisyDataset(), batch_size=8, shuffle=True)
    model = nn.Linear(8, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for step, (inputs, targets) in enumerate(loader):
        if step == 0:
            time.sleep(1.0)  # warm-up work (compilation, caches) while the workers run ahead
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(inputs), targets).backward()
        optimizer.step()
