"""A run killed with SIGKILL at a random moment and resumed ends bit-identical (CPU) to an
uninterrupted one; a corrupt newest checkpoint is skipped on resume."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch

from torchdoctor.recipes.loading import load_recipe
from torchdoctor.trainer import Trainer, TrainerConfig
from torchdoctor.trainer.checkpoint import CheckpointManager, CheckpointWarning

ROOT = Path(__file__).resolve().parents[2]
RECIPE = Path(__file__).resolve().parent / "crash_recipe.py"


def test_sigkill_at_a_random_moment_then_resume_is_bit_identical(tmp_path):
    # bench/crash_resume.py is the tool; one kill here, many in the benchmark
    out = tmp_path / "result.json"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "crash_resume.py"),
            "--runs",
            "1",
            "--epochs",
            "2",
            "--count",
            "128",
            "--seed",
            "3",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    result = json.loads(out.read_text())
    run = result["results"][0]
    assert run["reached_first_checkpoint"] and run["identical"]
    assert run["unreadable_checkpoints"] == []


def train(directory: Path, **changes):
    config = TrainerConfig(
        device="cpu",
        epochs=2,
        batch_size=16,
        workers=0,
        quiet=True,
        checkpoint_dir=str(directory),
        checkpoint_every_steps=3,
        **changes,
    )
    trainer = Trainer.from_recipe(load_recipe(str(RECIPE), count="128"), config)
    trainer.fit()
    return trainer


def test_resume_skips_a_corrupt_newest_checkpoint_and_still_ends_identical(tmp_path):
    reference = train(tmp_path / "reference")
    interrupted = tmp_path / "interrupted"
    train(interrupted, max_steps=7)  # checkpoints at steps 6 and 7 (8 steps per epoch)
    manager = CheckpointManager(interrupted, keep_last=2)
    newest = manager.path_for(7)
    newest.write_bytes(newest.read_bytes()[:200])  # as if the disk had lied about a write
    with pytest.warns(CheckpointWarning, match="ckpt-000000007.pt is truncated or corrupt"):
        resumed = train(interrupted, resume=True)
    for name, value in reference.model.state_dict().items():
        assert torch.equal(value, resumed.model.state_dict()[name]), name
    assert [r.train_loss for r in resumed.history] == [r.train_loss for r in reference.history]


def test_resume_in_an_empty_directory_starts_from_scratch(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointWarning)
        trainer = train(tmp_path / "fresh", resume=True, max_steps=2)
    assert trainer.global_step == 2


def test_time_based_checkpoints_land_mid_epoch_and_keep_last_prunes(tmp_path, monkeypatch):
    directory = tmp_path / "timed"
    config = TrainerConfig(
        device="cpu",
        epochs=1,
        batch_size=16,
        workers=0,
        quiet=True,
        max_steps=6,
        checkpoint_dir=str(directory),
        checkpoint_every_seconds=1e-6,
        keep_last=3,
    )
    saved = []
    trainer = Trainer.from_recipe(load_recipe(str(RECIPE), count="128"), config)
    real_save = CheckpointManager.save
    monkeypatch.setattr(
        CheckpointManager,
        "save",
        lambda self, state, step: saved.append(step) or real_save(self, state, step),
    )
    trainer.fit()
    assert saved[:5] == [1, 2, 3, 4, 5]  # every step: the interval has always elapsed
    assert [step for step, _ in CheckpointManager(directory).checkpoints()] == saved[-3:]
