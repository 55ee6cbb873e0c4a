"""One seeding of every random generator a training step draws from (Python, NumPy, torch and
every CUDA device), shared by the Trainer and the `--try` trial worker: a run is a function of
its seed, and a baseline and a variant see the same data order and initial weights."""

from __future__ import annotations

import random

import numpy as np
import torch


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)  # also seeds every CUDA device
