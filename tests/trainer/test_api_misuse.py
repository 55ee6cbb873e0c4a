"""Misusing the Python API gives one clear UsageError, not a TypeError deep inside fit()."""

import pytest
import torch
from torch import nn
from torch.utils.data import TensorDataset

from torchdoctor.errors import UsageError
from torchdoctor.trainer import Trainer, TrainerConfig


def model_and_data():
    torch.manual_seed(0)
    model = nn.Linear(4, 3)
    data = TensorDataset(torch.randn(16, 4), torch.randint(0, 3, (16,)))
    return model, data


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"config": {"epochs": 1}}, "config must be a TrainerConfig"),
        ({"loss_fn": None}, "loss_fn must be callable"),
        ({"optimizer": None}, "optimizer must be a torch.optim.Optimizer or a factory"),
    ],
)
def test_wrong_argument_types_are_usage_errors(kwargs, message):
    model, _ = model_and_data()
    arguments = {
        "optimizer": lambda p: torch.optim.SGD(p, lr=0.1),
        "loss_fn": nn.CrossEntropyLoss(),
        "config": TrainerConfig(device="cpu", workers=0, quiet=True),
        **kwargs,
    }
    with pytest.raises(UsageError, match=message):
        Trainer(model, arguments["optimizer"], arguments["loss_fn"], arguments["config"])


def test_a_loss_that_is_not_reduced_is_named():
    model, data = model_and_data()
    trainer = Trainer(
        model,
        lambda p: torch.optim.SGD(p, lr=0.1),
        nn.CrossEntropyLoss(reduction="none"),
        TrainerConfig(device="cpu", workers=0, quiet=True, batch_size=8),
    )
    with pytest.raises(UsageError, match=r"loss_fn must return a scalar .* shape \(8,\)"):
        trainer.fit(data)
