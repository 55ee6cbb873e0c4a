"""Turn TrainerConfig's "auto" switches into concrete choices for one device.

Every rule here is a small pure function of (the setting, facts about the machine), so the GPU
rules are unit-tested on a CPU-only machine by passing the facts in. `resolve_setup` gathers them
into one `ResolvedSetup` the loop reads; `apply_backend_flags` is the only function with side
effects (global cuDNN / TF32 switches).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch
from torch import nn

from torchdoctor.cores import usable_cores
from torchdoctor.errors import UsageError
from torchdoctor.trainer.config import TrainerConfig
from torchdoctor.trainer.config_types import check_types

PRECISIONS = ("auto", "fp32", "bf16", "fp16")
AUTOCAST_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


@dataclass(frozen=True)
class ResolvedSetup:
    device: torch.device
    workers: int
    pin_memory: bool
    persistent_workers: bool
    prefetch_factor: int | None
    precision: str  # fp32 | bf16 | fp16
    use_scaler: bool  # GradScaler only for fp16: bf16 has fp32's exponent range
    cudnn_benchmark: bool
    tf32: bool
    channels_last: bool
    non_blocking: bool  # only meaningful (and only requested) when the copy is host -> GPU
    # workers was "auto": a dataset of in-memory tensors then loads in the training process
    # (handing its batches over from worker processes costs more than indexing them)
    workers_auto: bool = False

    @property
    def autocast_dtype(self) -> torch.dtype | None:
        return AUTOCAST_DTYPES.get(self.precision)

    def to_dict(self) -> dict:
        """What "auto" became, as plain JSON values."""
        values = dataclasses.asdict(self)
        values["device"] = str(self.device)
        return values


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError) as exc:
        raise UsageError(f"unknown device {name!r}") from exc
    if device.type == "cuda" and not torch.cuda.is_available():
        raise UsageError(f"device {name!r} requested but CUDA is not available")
    if (
        device.type == "cuda"
        and device.index is not None
        and device.index >= torch.cuda.device_count()
    ):
        raise UsageError(
            f"device {name!r} requested but only {torch.cuda.device_count()} CUDA device(s) exist"
        )
    if device.type == "mps" and not torch.backends.mps.is_available():
        raise UsageError(f"device {name!r} requested but MPS is not available")
    if device.type not in ("cpu", "cuda", "mps"):  # meta, xpu...: the loop is written for these
        raise UsageError(f"device {name!r} is not supported: use cpu, cuda or cuda:N")
    return device


def resolve_workers(workers: int | str, cores: int) -> int:
    """auto: min(4, cores - 1) loader processes, leaving one core for the training process
    itself; 0 (load in the main process) when there is a single core, where a worker could only
    compete with training for that core."""
    if workers == "auto":
        return max(0, min(4, cores - 1))
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
        raise UsageError(f"workers must be 'auto' or an integer >= 0, got {workers!r}")
    return workers


def resolve_pin_memory(pin_memory: bool | str, device: torch.device) -> bool:
    """Pinned (page-locked) host buffers only help host->GPU copies; on CPU they only cost."""
    if pin_memory == "auto":
        return device.type == "cuda"
    return bool(pin_memory) and device.type == "cuda"


def resolve_precision(precision: str, device: torch.device, bf16_supported: bool) -> str:
    """auto: bf16 on a CUDA device that supports it (no GradScaler needed), else fp32.
    CPU stays fp32 on auto: bf16 autocast works there but is only faster on CPUs with AMX/
    AVX512-BF16, so it is opt-in (--precision bf16)."""
    if precision not in PRECISIONS:
        raise UsageError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    if precision == "auto":
        return "bf16" if device.type == "cuda" and bf16_supported else "fp32"
    if precision == "bf16" and device.type == "cuda" and not bf16_supported:
        raise UsageError("bf16 requested but this GPU does not support it; use --precision fp16")
    return precision


def has_conv(model: nn.Module) -> bool:
    return any(isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)) for m in model.modules())


def resolve_channels_last(flag: bool | str, device: torch.device, model_has_conv: bool) -> bool:
    """auto: NHWC for conv models on CUDA (Tensor Core convolutions prefer it); off on CPU and
    for models without convolutions, where it changes nothing or adds layout conversions."""
    if flag == "auto":
        return device.type == "cuda" and model_has_conv
    return bool(flag)


def resolve_cuda_switch(flag: bool | str, device: torch.device) -> bool:
    """cudnn.benchmark and TF32: auto means on for CUDA (they are no-ops elsewhere)."""
    if flag == "auto":
        return device.type == "cuda"
    return bool(flag)


def resolve_setup(config: TrainerConfig, model: nn.Module) -> ResolvedSetup:
    validate_config(config)
    device = resolve_device(config.device)
    bf16_ok = device.type == "cuda" and torch.cuda.is_bf16_supported()
    precision = resolve_precision(config.precision, device, bf16_ok)
    workers = resolve_workers(config.workers, usable_cores())
    return ResolvedSetup(
        device=device,
        workers=workers,
        workers_auto=config.workers == "auto",
        pin_memory=resolve_pin_memory(config.pin_memory, device),
        # Both are DataLoader errors when workers == 0, so they are only passed with workers.
        persistent_workers=config.persistent_workers and workers > 0,
        prefetch_factor=config.prefetch_factor if workers > 0 else None,
        precision=precision,
        use_scaler=precision == "fp16",
        cudnn_benchmark=resolve_cuda_switch(config.cudnn_benchmark, device),
        tf32=resolve_cuda_switch(config.tf32, device),
        channels_last=resolve_channels_last(config.channels_last, device, has_conv(model)),
        non_blocking=config.non_blocking and device.type == "cuda",
    )


def apply_backend_flags(setup: ResolvedSetup) -> None:
    """Global switches. cudnn.benchmark picks the fastest conv algorithm per input shape (pays
    off when shapes repeat); TF32 runs fp32 matmuls/convs on Tensor Cores (Ampere+)."""
    if setup.device.type != "cuda":
        return
    torch.backends.cudnn.benchmark = setup.cudnn_benchmark
    torch.backends.cuda.matmul.allow_tf32 = setup.tf32
    torch.backends.cudnn.allow_tf32 = setup.tf32


def make_grad_scaler(setup: ResolvedSetup) -> torch.amp.GradScaler | None:
    """fp16 gradients underflow without loss scaling; bf16 and fp32 need no scaler."""
    if not setup.use_scaler:
        return None
    return torch.amp.GradScaler(setup.device.type)


def _positive_int(name: str, value, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"{name} must be a positive integer, got {value!r}")


def validate_config(config: TrainerConfig) -> None:
    """Reject bad values before any work starts, with one line naming the setting."""
    check_types(config)  # wrong types (e.g. from a JSON config) first: the checks below compare
    _positive_int("epochs", config.epochs)
    _positive_int("batch_size", config.batch_size)
    _positive_int("eval_batch_size", config.eval_batch_size, allow_none=True)
    _positive_int("accumulate", config.accumulate)
    _positive_int("max_steps", config.max_steps, allow_none=True)
    _positive_int("checkpoint_every_steps", config.checkpoint_every_steps, allow_none=True)
    _positive_int("prefetch_factor", config.prefetch_factor, allow_none=True)
    _positive_int("keep_last", config.keep_last)
    if config.clip_norm is not None and not config.clip_norm > 0:
        raise UsageError(f"clip_norm must be > 0, got {config.clip_norm!r}")
    if config.precision not in PRECISIONS:
        raise UsageError(
            f"precision must be one of {', '.join(PRECISIONS)}, got {config.precision!r}"
        )
    if config.resume and not config.checkpoint_dir:
        raise UsageError("resume needs a checkpoint directory (--checkpoint-dir)")
    resolve_workers(config.workers, 1)


def check_trainer_arguments(model, optimizer, loss_fn, config) -> None:
    """Misuse of the Python API fails here, in one line, not as a TypeError deep in fit()."""
    from torchdoctor.trainer.config import TrainerConfig

    if not isinstance(model, nn.Module):
        raise UsageError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if not (isinstance(optimizer, torch.optim.Optimizer) or callable(optimizer)):
        raise UsageError(
            "optimizer must be a torch.optim.Optimizer or a factory "
            f"(params -> Optimizer), got {type(optimizer).__name__}"
        )
    if not callable(loss_fn):
        raise UsageError(
            f"loss_fn must be callable (outputs, targets) -> scalar tensor, got "
            f"{type(loss_fn).__name__}"
        )
    if config is not None and not isinstance(config, TrainerConfig):
        raise UsageError(
            f"config must be a TrainerConfig (TrainerConfig.from_dict(d) for a "
            f"dict), got {type(config).__name__}"
        )


def check_optimizer_params(optimizer: torch.optim.Optimizer, model: nn.Module) -> None:
    """An Optimizer built from another model's parameters (e.g. a second `Net()`) would step
    tensors the loop never trains: the model would silently not learn."""
    held = {id(p) for group in optimizer.param_groups for p in group["params"]}
    trainable = [p for p in model.parameters() if p.requires_grad]
    if trainable and not any(id(p) in held for p in trainable):
        raise UsageError(
            "the optimizer holds none of the model's parameters: build it from this model's "
            "parameters, or pass a factory (params -> Optimizer)"
        )
