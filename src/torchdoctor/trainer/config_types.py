"""Type checks for TrainerConfig values that may come from a JSON file (`train --config`,
`tune`'s output) or from Python: a wrong type must be one line before any work starts, not a
TypeError from deep inside the loop after an epoch of training (a number for checkpoint_dir
failed only at the first save), nor silently wrong ("false" is a true string; a string of
submodule names is iterated per character)."""

from __future__ import annotations

import os

import torch

from torchdoctor.errors import UsageError
from torchdoctor.trainer.faults import POLICIES as NAN_POLICIES

BOOL_FIELDS = ("persistent_workers", "non_blocking", "drop_last", "compile", "resume", "quiet")
AUTO_OR_BOOL_FIELDS = ("pin_memory", "cudnn_benchmark", "tf32", "channels_last")
POSITIVE_NUMBER_FIELDS = ("clip_norm", "checkpoint_every_seconds")  # or None


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_types(config) -> None:
    for name in BOOL_FIELDS:
        value = getattr(config, name)
        if not isinstance(value, bool):
            raise UsageError(f"{name} must be true or false, got {value!r}")
    for name in AUTO_OR_BOOL_FIELDS:
        value = getattr(config, name)
        if not (isinstance(value, bool) or value == "auto"):
            raise UsageError(f"{name} must be 'auto', true or false, got {value!r}")
    for name in POSITIVE_NUMBER_FIELDS:
        value = getattr(config, name)
        if value is not None and not (_is_number(value) and value > 0):
            raise UsageError(f"{name} must be a number > 0, got {value!r}")
    if isinstance(config.seed, bool) or not isinstance(config.seed, int):
        raise UsageError(f"seed must be an integer, got {config.seed!r}")
    if not isinstance(config.device, (str, torch.device)):
        raise UsageError(
            f"device must be a string such as 'cpu' or 'cuda:0', got {config.device!r}"
        )
    if config.checkpoint_dir is not None and not isinstance(
        config.checkpoint_dir, (str, os.PathLike)
    ):
        raise UsageError(f"checkpoint_dir must be a path string, got {config.checkpoint_dir!r}")
    if config.compile_mode is not None and not isinstance(config.compile_mode, str):
        raise UsageError(f"compile_mode must be a string, got {config.compile_mode!r}")
    names = config.activation_checkpointing
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise UsageError(
            f"activation_checkpointing must be a list of submodule names, got {names!r}"
        )
    if config.nan_policy not in NAN_POLICIES:
        raise UsageError(
            f"nan_policy must be one of {', '.join(NAN_POLICIES)}, got {config.nan_policy!r}"
        )
