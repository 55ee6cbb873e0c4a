"""A tiny user recipe for the crash/resume and DDP tests: every RNG the loop touches is in play.

- Dropout draws from the global torch RNG, and the dataset adds noise from Python's `random`
  and NumPy's global RNG in __getitem__ (main process, workers=0): a resume that restored only
  the torch RNG would diverge;
- BatchNorm (SyncBatchNorm under DDP), SGD with momentum and a StepLR scheduler: optimizer and
  scheduler state must come back too.
Options arrive as strings from `-o key=value`.
"""

from __future__ import annotations

import random

import numpy as np
import torch
from torch import nn
from torch.utils.data import Dataset

from torchdoctor.recipes.base import Recipe


class NoisyBlobs(Dataset):
    def __init__(self, count: int, noise: bool):
        generator = torch.Generator().manual_seed(7)
        self.x = torch.randn(count, 8, generator=generator)
        self.y = ((self.x[:, 0] + self.x[:, 1]) > 0).long()
        self.noise = noise

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, index: int):
        x = self.x[index]
        if self.noise:
            jitter = random.gauss(0.0, 0.01) + float(np.random.normal(0.0, 0.01))
            x = x + jitter
        return x, self.y[index]


def recipe(count="256", dropout="0.1", noise="1", sleep="0") -> Recipe:
    torch.manual_seed(3)
    model = nn.Sequential(
        nn.Linear(8, 32),
        nn.BatchNorm1d(32),
        nn.ReLU(),
        nn.Dropout(float(dropout)),
        nn.Linear(32, 2),
    )
    if float(sleep) > 0:  # slows each step so a test can kill the run mid-way
        import time

        model.register_forward_pre_hook(lambda module, args: time.sleep(float(sleep)))
    return Recipe(
        name="crash",
        model=model,
        train_data=NoisyBlobs(int(count), noise=noise == "1"),
        loss_fn=nn.CrossEntropyLoss(),
        optimizer=lambda params: torch.optim.SGD(params, lr=0.05, momentum=0.9),
        scheduler=lambda optimizer: torch.optim.lr_scheduler.StepLR(
            optimizer, step_size=5, gamma=0.7
        ),
        defaults={"batch_size": 16, "epochs": 2, "workers": 0},
    )
