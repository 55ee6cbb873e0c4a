"""Crash-safe checkpoints: a checkpoint on disk is either the complete old one or the complete new
one, never half of each, and a bad file is reported in one line instead of a pickle traceback.

Why each step of `save_checkpoint` exists:
- the temp file lives in the *same directory* so `os.replace` is a rename within one filesystem,
  which POSIX makes atomic (a reader sees the old file or the new one, nothing in between);
- `flush` + `os.fsync` before the rename, so a power loss cannot leave a renamed-but-empty file;
- `fsync` of the directory after the rename, so the rename itself survives a power loss.

Everything is read back with `torch.load(weights_only=True)` (no arbitrary code runs when a
checkpoint is opened), so the state must hold only tensors and plain Python data; RNG states are
converted accordingly and `save_checkpoint` checks the whole state *before* writing, because a
state that cannot be read back is only discovered after the crash it was meant to survive.
Seed 002: `map_location` lets a checkpoint written on a GPU load on a CPU-only machine.
"""

from __future__ import annotations

import collections
import os
import random
import re
import tempfile
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

from torchdoctor.errors import CheckpointError

_CHECKPOINT_NAME = re.compile(r"^ckpt-(\d{9,})\.pt$")
_TEMP_PREFIX = ".tmp-"
# what torch.load(weights_only=True) reads back on every supported torch (>= 2.3)
_PLAIN_TYPES = (int, float, bool, str, bytes, type(None), torch.Size, torch.dtype, torch.device)
_UMASK = os.umask(0o022)
os.umask(_UMASK)  # read once: mkstemp creates 0600 files, the checkpoint gets the usual mode


class CheckpointWarning(UserWarning):
    """A checkpoint was skipped (unreadable) while looking for the newest good one."""


def _first_line(error: BaseException) -> str:
    """The error's first sentence: enough to tell truncation from garbage, short enough for one line."""
    lines = str(error).strip().splitlines()
    if not lines:
        return type(error).__name__
    sentence = lines[0].split(". ")[0].rstrip(".")
    return f"{type(error).__name__}: {sentence[:160]}"


def check_loadable(value: Any, where: str = "state") -> None:
    """Raise CheckpointError naming the first entry torch.load(weights_only=True) cannot read."""
    if isinstance(value, torch.Tensor) or isinstance(value, _PLAIN_TYPES):
        return
    if isinstance(value, (dict, collections.OrderedDict)):
        for key, item in value.items():
            if not isinstance(key, (str, int)):
                raise CheckpointError(
                    f"{where} has a key of type {type(key).__name__}; use str or int keys"
                )
            check_loadable(item, f"{where}[{key!r}]")
        return
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            check_loadable(item, f"{where}[{index}]")
        return
    raise CheckpointError(
        f"{where} is a {type(value).__module__}.{type(value).__qualname__}, which "
        "torch.load(weights_only=True) cannot read back; store tensors or plain Python data"
    )


def _fsync_directory(directory: Path) -> None:
    if os.name != "posix":  # directories cannot be opened for fsync on Windows
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def save_checkpoint(path: str | os.PathLike, state: dict) -> Path:
    """Write `state` to `path` atomically; on failure raise CheckpointError and leave `path` as it was."""
    path = Path(path)
    check_loadable(state)
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise CheckpointError(
            f"cannot write checkpoint {path}: directory {directory} does not exist"
        )
    temp_name = None
    try:
        fd, temp_name = tempfile.mkstemp(prefix=f"{_TEMP_PREFIX}{path.name}.", dir=directory)
        with os.fdopen(fd, "wb") as handle:
            if hasattr(os, "fchmod"):  # POSIX only
                os.fchmod(handle.fileno(), 0o666 & ~_UMASK)
            torch.save(state, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp_name, path)
        temp_name = None
        _fsync_directory(directory)
    except (OSError, RuntimeError) as error:
        reason = (
            os.strerror(error.errno)
            if isinstance(error, OSError) and error.errno
            else _first_line(error)
        )
        raise CheckpointError(
            f"cannot write checkpoint {path} ({reason}); the previous checkpoint, if any, is untouched"
        ) from error
    finally:
        if temp_name is not None:
            try:
                os.unlink(temp_name)
            except OSError:
                pass
    return path


def load_checkpoint(path: str | os.PathLike, map_location: Any = "cpu") -> dict:
    """Read a checkpoint written by save_checkpoint; CheckpointError (one line) if it cannot be read."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {path} does not exist")
    try:
        handle = open(path, "rb")
    except OSError as error:
        raise CheckpointError(f"cannot read checkpoint {path} ({_first_line(error)})") from error
    try:
        with handle:
            state = torch.load(handle, map_location=map_location, weights_only=True)
    except (
        Exception
    ) as error:  # torch raises RuntimeError, UnpicklingError, EOFError, ... for bad bytes
        refused = "Weights only load failed" in str(error)
        if refused and zipfile.is_zipfile(path):  # a complete archive, but with arbitrary objects
            raise CheckpointError(
                f"checkpoint {path} holds objects other than tensors and plain data, refusing to "
                "unpickle it (torch.load weights_only=True); it was not written by torchdoctor"
            ) from error
        # torch.load falls back to the legacy pickle reader for anything that is not a zip
        # archive, so a truncated archive surfaces as an unpickling refusal: name it for what it is
        reason = "not a complete torch.save archive" if refused else _first_line(error)
        if path.stat().st_size == 0:
            reason = "the file is empty"
        raise CheckpointError(
            f"checkpoint {path} is truncated or corrupt ({reason}); "
            "the previous checkpoint, if any, is untouched"
        ) from error
    if not isinstance(state, dict):
        raise CheckpointError(f"checkpoint {path} holds a {type(state).__name__}, expected a dict")
    return state


# --- random number generators ------------------------------------------------------------------


def capture_rng_state() -> dict:
    """Every RNG a training step can draw from, as weights_only-loadable data."""
    version, internal, gauss = random.getstate()
    np_kind, np_keys, np_pos, np_has_gauss, np_gauss = np.random.get_state()
    state = {
        "python": {"version": version, "state": list(internal), "gauss": gauss},
        "numpy": {
            "kind": str(np_kind),
            "keys": torch.from_numpy(np.asarray(np_keys, dtype=np.int64)),
            "pos": int(np_pos),
            "has_gauss": int(np_has_gauss),
            "cached_gaussian": float(np_gauss),
        },
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
    }
    return state


def restore_rng_state(state: dict) -> None:
    """Put back what capture_rng_state returned (CUDA states only for devices that exist here)."""
    py = state["python"]
    random.setstate((py["version"], tuple(py["state"]), py["gauss"]))
    npy = state["numpy"]
    keys = npy["keys"].cpu().numpy().astype(np.uint32)
    np.random.set_state((npy["kind"], keys, npy["pos"], npy["has_gauss"], npy["cached_gaussian"]))
    torch.set_rng_state(state["torch"].cpu())
    cuda_states = state.get("cuda") or []
    if cuda_states and torch.cuda.is_available():
        count = min(len(cuda_states), torch.cuda.device_count())
        for index in range(count):
            torch.cuda.set_rng_state(cuda_states[index].cpu(), index)


# --- a directory of numbered checkpoints -------------------------------------------------------


class CheckpointManager:
    """`ckpt-{step:09d}.pt` files in one directory, newest `keep_last` kept.

    Old files are pruned only after the new one is durably on disk, so at every instant at least
    one complete checkpoint exists. `latest()` skips a newest file that does not load (say the
    disk filled up on a machine without atomic rename) and falls back to the one before it.
    """

    def __init__(self, directory: str | os.PathLike, keep_last: int = 2):
        if keep_last < 1:
            raise CheckpointError(f"keep_last must be at least 1, got {keep_last}")
        self.directory = Path(directory)
        self.keep_last = keep_last

    def path_for(self, step: int) -> Path:
        return self.directory / f"ckpt-{step:09d}.pt"

    def checkpoints(self) -> list[tuple[int, Path]]:
        """(step, path) of every checkpoint file, oldest first; temp files are not checkpoints."""
        if not self.directory.is_dir():
            return []
        found = []
        for entry in self.directory.iterdir():
            match = _CHECKPOINT_NAME.match(entry.name)
            if match and entry.is_file():
                found.append((int(match.group(1)), entry))
        return sorted(found)

    def _make_directory(self, error_type=CheckpointError) -> None:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise error_type(
                f"cannot create checkpoint directory {self.directory} ({os.strerror(error.errno or 0)})"
            ) from error

    def check_writable(self) -> None:
        """Before training: a directory we cannot write to is a bad setting (UsageError), found
        now rather than at the first save, after an epoch of work."""
        from torchdoctor.errors import UsageError

        self._make_directory(UsageError)
        try:
            handle, probe = tempfile.mkstemp(dir=self.directory, prefix=".write-probe-")
            os.close(handle)
            os.unlink(probe)
        except OSError as error:
            raise UsageError(
                f"cannot write checkpoints to {self.directory} ({os.strerror(error.errno or 0)})"
            ) from None

    def save(self, state: dict, step: int) -> Path:
        self._make_directory()
        path = save_checkpoint(self.path_for(step), state)
        self._prune(keep=path)
        self._remove_stale_temp_files()
        return path

    def _prune(self, keep: Path) -> None:
        existing = self.checkpoints()
        newest = {path for _, path in existing[-self.keep_last :]} | {keep}
        for _, path in existing:
            if path not in newest:
                try:
                    path.unlink()
                except FileNotFoundError:
                    pass

    def _remove_stale_temp_files(self) -> None:
        # a temp file left behind by a process killed mid-save is never a checkpoint
        for entry in self.directory.glob(f"{_TEMP_PREFIX}ckpt-*"):
            try:
                entry.unlink()
            except OSError:
                pass

    def _newest_loadable(self, map_location: Any) -> tuple[Path, dict] | None:
        for _, path in reversed(self.checkpoints()):
            try:
                return path, load_checkpoint(path, map_location=map_location)
            except CheckpointError as error:
                warnings.warn(
                    f"skipping unreadable checkpoint: {error}", CheckpointWarning, stacklevel=3
                )
        return None

    def latest(self) -> Path | None:
        """The newest checkpoint that loads, or None when there is none."""
        found = self._newest_loadable("cpu")
        return found[0] if found else None

    def load_latest(self, map_location: Any = "cpu") -> dict | None:
        """The state of the newest checkpoint that loads (its path under "_path"), or None."""
        found = self._newest_loadable(map_location)
        if found is None:
            return None
        path, state = found
        state["_path"] = str(path)
        return state
