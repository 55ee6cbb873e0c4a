"""Interrupt a run (separate process, --max-steps), resume it in another process, and get the
uninterrupted run's weights bit for bit: data order, dropout RNG, AdamW and LR-scheduler state,
accumulation windows and the epoch's running metrics all continue exactly."""

import json
import subprocess
import sys
import textwrap

import pytest
import torch

from torchdoctor.errors import UsageError
from torchdoctor.recipes.loading import load_recipe
from torchdoctor.trainer import Trainer, TrainerConfig
from torchdoctor.trainer.checkpoint import CheckpointManager

RECIPE = textwrap.dedent(
    """
    import torch
    from torch import nn
    from torch.utils.data import TensorDataset
    import torchdoctor

    def recipe():
        g = torch.Generator().manual_seed(1)
        x = torch.randn(42, 6, generator=g)
        y = (x[:, 0] > 0).long()
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 2))
        return torchdoctor.Recipe(
            name="resume-probe", model=model, train_data=TensorDataset(x, y),
            val_data=TensorDataset(x[:10], y[:10]), loss_fn=nn.CrossEntropyLoss(),
            optimizer=lambda p: torch.optim.AdamW(p, lr=0.01),
            scheduler=lambda opt: torch.optim.lr_scheduler.StepLR(opt, step_size=5, gamma=0.5),
            # 42 samples / batch 4 = 11 micro-batches (last one 2 samples); windows of 2 -> 6 steps
            defaults={"epochs": 3, "batch_size": 4, "accumulate": 2, "workers": 0, "seed": 5},
        )
    """
)


def train(recipe, *args):
    command = [sys.executable, "-m", "torchdoctor", "train", str(recipe), "--quiet", *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result


def final_weights(directory):
    path = CheckpointManager(directory).latest()
    return torch.load(path, weights_only=True)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("resume")
    recipe = tmp / "probe_recipe.py"
    recipe.write_text(RECIPE)
    whole, parts = tmp / "whole", tmp / "parts"
    train(recipe, "--checkpoint-dir", whole, "--json", tmp / "whole.json")
    # stops at step 8: inside epoch 2, mid-epoch checkpoint after 4 of its 11 micro-batches
    train(recipe, "--checkpoint-dir", parts, "--checkpoint-every", "3", "--max-steps", "8")
    interrupted = final_weights(parts)
    train(recipe, "--checkpoint-dir", parts, "--resume", "--json", tmp / "parts.json")
    return tmp, recipe, interrupted


def test_interrupted_then_resumed_run_matches_uninterrupted_bit_for_bit(runs):
    tmp, _, interrupted = runs
    assert (interrupted["epoch"], interrupted["batches_done"], interrupted["step"]) == (1, 4, 8)
    whole, resumed = final_weights(tmp / "whole"), final_weights(tmp / "parts")
    assert whole["step"] == resumed["step"] == 18
    for name, tensor in whole["model"].items():
        assert torch.equal(tensor, resumed["model"][name]), name
    assert whole["scheduler"] == resumed["scheduler"]


def test_resumed_history_reports_every_epoch_like_the_uninterrupted_run(runs):
    tmp, _, _ = runs
    whole = json.loads((tmp / "whole.json").read_text())["epochs"]
    resumed = json.loads((tmp / "parts.json").read_text())["epochs"]
    keys = ("epoch", "train_loss", "train_accuracy", "val_loss", "val_accuracy", "steps")
    assert [[e[k] for k in keys] for e in whole] == [[e[k] for k in keys] for e in resumed]


def test_resuming_with_a_different_batch_size_is_refused(runs):
    tmp, recipe, _ = runs
    loaded = load_recipe(str(recipe))
    config = TrainerConfig.from_dict(
        {
            **loaded.defaults,
            "batch_size": 8,
            "checkpoint_dir": str(tmp / "parts"),
            "resume": True,
            "quiet": True,
        }
    )
    with pytest.raises(UsageError, match="batch_size=4"):
        Trainer.from_recipe(loaded, config).fit()
