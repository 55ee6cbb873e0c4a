"""Atomic checkpoint writes, one-line errors for bad files, pruning, RNG round trips (real files)."""

from __future__ import annotations

import errno
import os
import pickle
import random
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from torchdoctor.errors import CheckpointError
from torchdoctor.seeding import seed_everything
from torchdoctor.trainer import checkpoint
from torchdoctor.trainer.checkpoint import (
    CheckpointManager,
    CheckpointWarning,
    capture_rng_state,
    load_checkpoint,
    restore_rng_state,
    save_checkpoint,
)


def state(step: int) -> dict:
    return {"step": step, "weights": torch.full((4,), float(step)), "rng": capture_rng_state()}


def one_line(error: pytest.ExceptionInfo) -> str:
    message = str(error.value)
    assert "\n" not in message
    return message


def test_round_trip_through_weights_only_load(tmp_path):
    path = save_checkpoint(tmp_path / "a.pt", state(3))
    loaded = load_checkpoint(path, map_location="cpu")
    assert loaded["step"] == 3 and torch.equal(loaded["weights"], torch.full((4,), 3.0))
    assert [p.name for p in tmp_path.iterdir()] == ["a.pt"]  # no temp file left behind


@pytest.mark.parametrize(
    "target, error",
    [
        ("os.replace", OSError(errno.EACCES, "Permission denied")),
        ("os.fsync", OSError(errno.ENOSPC, "No space left on device")),
        ("torch.save", OSError(errno.ENOSPC, "No space left on device")),
        ("torch.save", RuntimeError("[enforce fail at inline_container.cc] unexpected pos")),
    ],
)
def test_failed_save_keeps_previous_checkpoint_and_removes_temp_file(
    tmp_path, monkeypatch, target, error
):
    path = tmp_path / "ckpt.pt"
    save_checkpoint(path, state(1))
    before = path.read_bytes()

    def fail(*args, **kwargs):
        raise error

    module_name, name = target.rsplit(".", 1)
    monkeypatch.setattr({"os": os, "torch": torch}[module_name], name, fail)
    with pytest.raises(CheckpointError) as caught:
        save_checkpoint(path, state(2))
    monkeypatch.undo()
    assert "previous checkpoint, if any, is untouched" in one_line(caught)
    assert path.read_bytes() == before
    assert load_checkpoint(path)["step"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.pt"]


def test_disk_full_during_write_is_reported_in_words(tmp_path, monkeypatch):
    real_save = torch.save

    def save_half_then_fail(obj, handle, *args, **kwargs):
        real_save(obj, handle, *args, **kwargs)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(torch, "save", save_half_then_fail)
    with pytest.raises(CheckpointError, match="No space left on device") as caught:
        save_checkpoint(tmp_path / "c.pt", state(1))
    one_line(caught)
    assert list(tmp_path.iterdir()) == []


def test_unwritable_directory_is_a_clear_error(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the directory should be")
    with pytest.raises(CheckpointError, match="does not exist"):
        save_checkpoint(blocker / "ckpt.pt", state(1))
    with pytest.raises(CheckpointError, match="cannot create checkpoint directory") as caught:
        CheckpointManager(blocker / "sub").save(state(1), 1)
    one_line(caught)


def test_state_that_weights_only_cannot_read_is_refused_before_writing(tmp_path):
    with pytest.raises(CheckpointError, match=r"state\['extra'\]\[0\] is a builtins.slice"):
        save_checkpoint(tmp_path / "x.pt", {"extra": [slice(1, 2)]})
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty"])
def test_truncated_or_corrupt_file_is_one_line(tmp_path, damage):
    path = save_checkpoint(tmp_path / "ckpt.pt", state(1))
    data = path.read_bytes()
    path.write_bytes(
        {"truncate": data[: len(data) // 2], "garbage": os.urandom(len(data)), "empty": b""}[damage]
    )
    with pytest.raises(CheckpointError) as caught:
        load_checkpoint(path)
    assert one_line(caught).startswith(f"checkpoint {path} is truncated or corrupt (")


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
def test_missing_file_and_foreign_pickle(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(tmp_path / "nope.pt")
    foreign = tmp_path / "foreign.pt"
    torch.save({"payload": slice(0, 3)}, foreign)  # unpickling it would need arbitrary objects
    with pytest.raises(CheckpointError, match="refusing to unpickle") as caught:
        load_checkpoint(foreign)
    one_line(caught)
    plain = tmp_path / "plain.pt"
    plain.write_bytes(pickle.dumps([1, 2]))
    with pytest.raises(CheckpointError):
        load_checkpoint(plain)


def test_manager_keeps_last_k_and_ignores_temp_files(tmp_path):
    manager = CheckpointManager(tmp_path, keep_last=2)
    (tmp_path / ".tmp-ckpt-000000002.pt.abc").write_bytes(b"left by a killed save")
    for step in (1, 2, 3, 4):
        manager.save(state(step), step)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt-000000003.pt", "ckpt-000000004.pt"]
    assert manager.latest() == tmp_path / "ckpt-000000004.pt"


def test_prune_happens_only_after_the_new_file_is_durable(tmp_path, monkeypatch):
    manager = CheckpointManager(tmp_path, keep_last=1)
    manager.save(state(1), 1)
    monkeypatch.setattr(
        os, "replace", lambda *a: (_ for _ in ()).throw(OSError(errno.EIO, "I/O error"))
    )
    with pytest.raises(CheckpointError):
        manager.save(state(2), 2)
    monkeypatch.undo()
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt-000000001.pt"]


def test_latest_skips_a_corrupt_newest_with_a_warning(tmp_path):
    manager = CheckpointManager(tmp_path, keep_last=3)
    for step in (10, 20):
        manager.save(state(step), step)
    newest = manager.path_for(20)
    newest.write_bytes(newest.read_bytes()[:100])
    with pytest.warns(CheckpointWarning, match="ckpt-000000020.pt is truncated or corrupt"):
        assert manager.latest() == manager.path_for(10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CheckpointWarning)
        loaded = manager.load_latest()
    assert loaded["step"] == 10 and loaded["_path"] == str(manager.path_for(10))


def test_empty_directory_has_no_latest(tmp_path):
    assert CheckpointManager(tmp_path / "never-created").latest() is None
    assert CheckpointManager(tmp_path).load_latest() is None


def draws() -> tuple:
    return random.random(), random.gauss(0, 1), float(np.random.normal()), torch.rand(3).tolist()


def test_rng_state_round_trips_through_a_checkpoint_file(tmp_path):
    seed_everything(123)
    random.gauss(0, 1)  # leaves a cached gaussian in Python's state: it must survive too
    np.random.normal()
    path = save_checkpoint(tmp_path / "rng.pt", {"rng": capture_rng_state()})
    expected = draws()
    seed_everything(999)
    restore_rng_state(load_checkpoint(path)["rng"])
    assert draws() == expected


def test_seed_everything_makes_every_rng_repeatable():
    seed_everything(5)
    first = draws()
    seed_everything(5)
    assert draws() == first
    assert checkpoint.capture_rng_state()["cuda"] == [] or torch.cuda.is_available()


def test_cli_reports_an_unwritable_checkpoint_directory_in_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    recipe = Path(__file__).resolve().parent / "crash_recipe.py"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "torchdoctor",
            "train",
            str(recipe),
            "--max-steps",
            "1",
            "--quiet",
            "--checkpoint-dir",
            str(blocker / "run"),
            "--json",
            str(tmp_path / "h.json"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    # a bad setting, found before any training (QA3 F8: it used to surface at the first save)
    assert done.returncode == 2
    assert not (tmp_path / "h.json").exists()
    assert done.stderr.strip().splitlines() == [
        f"torchdoctor: error: cannot create checkpoint directory {blocker / 'run'} (Not a directory)"
    ]
