"""Every switch of the reference loop, in one dataclass. Defaults are the fast *and* correct
choice for the device; "auto" means "decide from the device and the model when fit() starts".

The CLI (`torchdoctor train`) maps one flag to each field, and `torchdoctor tune` writes a JSON
file of these fields that `train --config` reads back.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Literal

Precision = Literal["auto", "fp32", "bf16", "fp16"]
Auto = Literal["auto"]


@dataclass
class TrainerConfig:
    # where and how long
    device: str = "auto"  # "auto" -> cuda if available else cpu; or "cpu", "cuda", "cuda:1"
    epochs: int = 1
    max_steps: int | None = None  # stop after this many optimizer steps (None: run all epochs)
    seed: int = 0

    # data loading (seed 000/001/002: workers, pinned memory, non_blocking copies)
    batch_size: int = 64
    eval_batch_size: int | None = None  # None -> 2 * batch_size (no activations kept for backward)
    workers: int | Auto = "auto"  # "auto" -> derived from the cores, 0 inside a worker-less sandbox
    pin_memory: bool | Auto = "auto"  # "auto" -> True on CUDA only
    persistent_workers: bool = True
    prefetch_factor: int | None = 2
    non_blocking: bool = True
    drop_last: bool = False

    # numerics (seed 002/003: AMP with GradScaler for fp16; torch.amp, never torch.cuda.amp)
    precision: Precision = "auto"  # "auto" -> bf16 on CUDA with bf16 support, else fp32
    clip_norm: float | None = None  # clip_grad_norm_ after scaler.unscale_; pre-clip norm recorded
    accumulate: int = 1  # micro-batches per optimizer step; loss weighted by real sample share

    # device tuning (seed 002/004)
    cudnn_benchmark: bool | Auto = "auto"  # "auto" -> on for CUDA
    tf32: bool | Auto = "auto"  # "auto" -> on for CUDA
    channels_last: bool | Auto = "auto"  # "auto" -> on for conv models on CUDA
    compile: bool = False
    compile_mode: str | None = None  # torch.compile mode: None, "reduce-overhead", "max-autotune"
    activation_checkpointing: list[str] = field(default_factory=list)  # submodule names

    # checkpoints and resume (issue 6 extends: every N steps / seconds, keep last K)
    checkpoint_dir: str | None = None
    checkpoint_every_steps: int | None = None
    checkpoint_every_seconds: float | None = None
    keep_last: int = 2
    resume: bool = False  # resume from the newest good checkpoint in checkpoint_dir

    # faults
    nan_policy: Literal["stop", "skip", "continue"] = "stop"

    # output
    quiet: bool = False

    def __post_init__(self):
        # A pathlib.Path is natural from Python, but the config goes into every checkpoint and
        # torch.load(weights_only=True) cannot read a Path back: store the plain string.
        if isinstance(self.checkpoint_dir, os.PathLike):
            self.checkpoint_dir = os.fspath(self.checkpoint_dir)

    def replace(self, **changes) -> TrainerConfig:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> TrainerConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            from torchdoctor.errors import UsageError

            raise UsageError(f"unknown trainer setting(s): {', '.join(unknown)}")
        return cls(**data)
