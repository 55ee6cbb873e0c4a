"""What a recipe is: everything the reference loop needs that is specific to one problem.

A recipe is a function returning a `Recipe`. Built-in recipes live in this package
(`torchdoctor.recipes.REGISTRY`); a user's recipe is any Python file defining

    def recipe(**options) -> torchdoctor.Recipe: ...

which `torchdoctor train path/to/file.py` loads (see torchdoctor.recipes.loading).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn
from torch.utils.data import Dataset

OptimizerFactory = Callable[[Iterable[nn.Parameter]], torch.optim.Optimizer]
SchedulerFactory = Callable[[torch.optim.Optimizer], Any]


@dataclass
class Recipe:
    name: str
    model: nn.Module
    train_data: Dataset
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    # A factory, so the optimizer is built on the parameters the loop finally trains
    # (after device placement, channels_last, SyncBatchNorm conversion).
    optimizer: OptimizerFactory
    val_data: Dataset | None = None
    scheduler: SchedulerFactory | None = None
    # TrainerConfig fields this recipe wants by default (e.g. {"batch_size": 128, "epochs": 3});
    # command-line flags override them.
    defaults: dict[str, Any] = field(default_factory=dict)
    # True when outputs are class logits, so the loop reports accuracy.
    classification: bool = True
