"""What a training checkpoint holds, and how the loop restores it.

Saving and loading (atomic writes, readable-newest lookup, RNG capture) belong to
torchdoctor.trainer.checkpoint; this module only decides the contents. Everything stored is a
tensor, a number, a string, or a dict/list of those, so it loads with weights_only=True.

A checkpoint is written only at an optimizer-step boundary, so `batches_done` (micro-batches of
epoch `epoch` already trained on) is always a whole number of accumulation windows and a resumed
run re-forms exactly the same windows.
"""

from __future__ import annotations

from pathlib import Path

import torch

from torchdoctor.errors import CheckpointError, UsageError

STATE_FORMAT = "torchdoctor.trainer/1"
# Settings that change which samples form which step; resuming with different values would not
# continue the same run.
MUST_MATCH = ("batch_size", "accumulate", "seed", "drop_last")


def build_state(trainer, epoch: int, batches_done: int, meter_state: dict | None) -> dict:
    from torchdoctor.trainer.checkpoint import capture_rng_state

    return {
        "format": STATE_FORMAT,
        "model": trainer.model.state_dict(),
        "optimizer": trainer.optimizer.state_dict(),
        "scaler": trainer.scaler.state_dict() if trainer.scaler is not None else None,
        "scheduler": trainer.scheduler.state_dict() if trainer.scheduler is not None else None,
        "epoch": epoch,
        "step": trainer.global_step,
        "batches_done": batches_done,
        "epoch_meter": meter_state,
        "history": [record.to_dict() for record in trainer.history],
        "rng": capture_rng_state(),
        "config": trainer.config.to_dict(),
    }


def check_compatible(saved_config: dict, config_now: dict, path: Path) -> None:
    for key in MUST_MATCH:
        if key in saved_config and saved_config[key] != config_now[key]:
            raise UsageError(
                f"cannot resume from {path}: it was written with {key}={saved_config[key]!r}, "
                f"this run has {key}={config_now[key]!r}"
            )


def load_latest(directory: str, keep_last: int, device: torch.device) -> tuple[dict, Path] | None:
    """The newest readable checkpoint in `directory`, loaded onto `device`, or None."""
    from torchdoctor.trainer.checkpoint import CheckpointManager

    manager = CheckpointManager(directory, keep_last)
    state = manager.load_latest(map_location=device)
    if state is None:
        unreadable = manager.checkpoints()
        if unreadable:
            # Starting afresh would silently throw the run away: refuse, and touch nothing.
            raise CheckpointError(
                f"cannot resume: none of the {len(unreadable)} checkpoint(s) in {directory} is "
                f"readable (newest: {unreadable[-1][1].name}); they are left untouched; move "
                "them away to start a new run"
            )
        return None
    return state, Path(state.pop("_path"))


def restore_state(trainer, state: dict, path: Path) -> None:
    from torchdoctor.trainer.checkpoint import restore_rng_state

    # A checkpoint of another model (or optimizer) is the user's mix-up, not our crash: say
    # which file and what did not match, in one line; the file itself is left untouched.
    for what, target in (("model", trainer.model), ("optimizer", trainer.optimizer)):
        try:
            target.load_state_dict(state[what])
        except (RuntimeError, ValueError, KeyError) as exc:
            detail = " ".join(str(exc).split()).rstrip(".")
            detail = detail if len(detail) <= 300 else detail[:297] + "..."
            raise CheckpointError(
                f"cannot resume from {path}: its {what} does not match this run's ({detail}); "
                "use another --checkpoint-dir to start fresh"
            ) from None
    if trainer.scaler is not None and state.get("scaler") is not None:
        trainer.scaler.load_state_dict(state["scaler"])
    if trainer.scheduler is not None and state.get("scheduler") is not None:
        trainer.scheduler.load_state_dict(state["scheduler"])
    trainer.global_step = state["step"]
    restore_rng_state(state["rng"])
