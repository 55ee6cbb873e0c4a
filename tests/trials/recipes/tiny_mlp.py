"""A tiny user recipe for tune tests: an MLP on generated, linearly separable data."""

import torch
from torch import nn
from torch.utils.data import TensorDataset

from torchdoctor.recipes.base import Recipe


def recipe(n_train=256, features=16, hidden=32, seed=0):
    generator = torch.Generator().manual_seed(int(seed))
    x = torch.randn(int(n_train) + 64, int(features), generator=generator)
    y = (x[:, 0] + x[:, 1] > 0).long()
    torch.manual_seed(int(seed))
    model = nn.Sequential(nn.Linear(int(features), int(hidden)), nn.ReLU(),
                          nn.Linear(int(hidden), int(hidden)), nn.ReLU(), nn.Linear(int(hidden), 2))
    return Recipe(
        name="tiny-mlp",
        model=model,
        train_data=TensorDataset(x[: int(n_train)], y[: int(n_train)]),
        val_data=TensorDataset(x[int(n_train):], y[int(n_train):]),
        loss_fn=nn.CrossEntropyLoss(),
        optimizer=lambda params: torch.optim.SGD(params, lr=0.1),
        defaults={"batch_size": 32, "epochs": 1},
    )
