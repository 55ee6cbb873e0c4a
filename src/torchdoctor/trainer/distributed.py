"""Multi-process training under `torchrun`: who am I, join the group, wrap the model, agree.

`torchrun --nproc_per_node N -m torchdoctor train ...` starts N copies of the program with
RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set; `detect()` reads them. Without
them (or with WORLD_SIZE=1) everything here is a no-op, so the Trainer calls these functions
unconditionally.

Failure modes this module turns into one clear line instead of a hang:
- a rank that cannot reach MASTER_ADDR: `init_process_group` times out after `timeout_s`;
- ranks started with different settings (a different batch size on one node): every later
  collective would wait forever for a peer doing something else, so `check_agreement` compares
  a digest of the configuration first and fails on every rank, naming the settings that differ.
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import gc
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

import torch
import torch.distributed as dist
from torch import nn

from torchdoctor.errors import TorchdoctorError, UsageError
from torchdoctor.trainer.sync_batchnorm import convert_sync_batchnorm, has_batchnorm

T = TypeVar("T")


@dataclass(frozen=True)
class DistEnv:
    rank: int = 0
    local_rank: int = 0
    world_size: int = 1
    backend: str | None = None  # set by setup(): "gloo" on CPU, "nccl" on CUDA

    @property
    def is_distributed(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise UsageError(f"environment variable {name}={raw!r} is not an integer") from None


def detect() -> DistEnv:
    """The process's place in the job, from torchrun's environment variables (single process if unset)."""
    world_size = _env_int("WORLD_SIZE", 1)
    rank = _env_int("RANK", 0)
    local_rank = _env_int("LOCAL_RANK", rank)
    if world_size < 1 or not 0 <= rank < world_size:
        raise UsageError(f"RANK={rank} does not fit WORLD_SIZE={world_size}")
    if world_size > 1:
        missing = [name for name in ("MASTER_ADDR", "MASTER_PORT") if not os.environ.get(name)]
        if missing:
            raise UsageError(
                f"WORLD_SIZE={world_size} but {' and '.join(missing)} not set; launch with torchrun"
            )
    return DistEnv(rank=rank, local_rank=local_rank, world_size=world_size)


def rank_device(env: DistEnv, device: torch.device | str) -> torch.device:
    """The device this rank trains on: cuda:LOCAL_RANK for a CUDA run, else `device` unchanged."""
    device = torch.device(device)
    if env.is_distributed and device.type == "cuda":
        return torch.device("cuda", env.local_rank)
    return device


def backend_for(device: torch.device) -> str:
    """nccl for CUDA tensors (GPU-direct, fastest), gloo for everything on the CPU."""
    return "nccl" if device.type == "cuda" else "gloo"


def setup(env: DistEnv, device: torch.device | str, timeout_s: float = 300.0) -> DistEnv:
    """Join the process group (gloo on CPU, nccl on CUDA); returns `env` with its backend set."""
    if not env.is_distributed:
        return env
    device = rank_device(env, device)
    backend = backend_for(device)
    if device.type == "cuda":
        if env.local_rank >= torch.cuda.device_count():
            raise UsageError(
                f"LOCAL_RANK={env.local_rank} but this machine has {torch.cuda.device_count()} GPU(s)"
            )
        torch.cuda.set_device(device)
    if dist.is_initialized():  # the user's script joined already: use its group as it is
        return dataclasses.replace(env, backend=dist.get_backend())
    try:
        dist.init_process_group(
            backend, rank=env.rank, world_size=env.world_size, timeout=timedelta(seconds=timeout_s)
        )
    except Exception as error:  # DistStoreError, RuntimeError, TimeoutError depending on version
        where = f"{os.environ.get('MASTER_ADDR')}:{os.environ.get('MASTER_PORT')}"
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise TorchdoctorError(
            f"rank {env.rank} could not join the {backend} process group at {where} "
            f"within {timeout_s:g}s ({first[:160]})"
        ) from error
    atexit.register(teardown, env)  # leave the group cleanly even if the caller never does
    return dataclasses.replace(env, backend=backend)


def prepare_model(model: nn.Module, env: DistEnv, device: torch.device | str) -> nn.Module:
    """SyncBatchNorm (before wrapping, seed 004) when the model has BatchNorm, then DDP.

    Call after the model is on `device` and before creating the optimizer from its parameters
    (conversion keeps the same Parameter objects, so an existing optimizer also stays valid).
    """
    if not env.is_distributed or isinstance(model, nn.parallel.DistributedDataParallel):
        return model  # (a model the user wrapped already is used as it is)
    device = rank_device(env, device)
    if has_batchnorm(model):
        model = convert_sync_batchnorm(model, device)
    device_ids = [device.index] if device.type == "cuda" else None
    return nn.parallel.DistributedDataParallel(model, device_ids=device_ids)


def unwrap(model: nn.Module) -> nn.Module:
    """The user's module inside DDP (what checkpoints store, so they load without DDP)."""
    return model.module if isinstance(model, nn.parallel.DistributedDataParallel) else model


def _collective_device(env: DistEnv) -> torch.device:
    # nccl only reduces CUDA tensors; gloo reduces CPU tensors
    return (
        torch.device("cuda", torch.cuda.current_device())
        if env.backend == "nccl"
        else torch.device("cpu")
    )


def _all_reduce(value: Any, env: DistEnv, average: bool) -> Any:
    if not env.is_distributed:
        return value
    is_tensor = isinstance(value, torch.Tensor)
    tensor = value.detach() if is_tensor else torch.tensor(float(value), dtype=torch.float64)
    reduced = tensor.to(_collective_device(env), copy=True)
    dist.all_reduce(reduced, op=dist.ReduceOp.SUM)
    if average:
        reduced = reduced / env.world_size
    return reduced.to(tensor.device) if is_tensor else float(reduced.item())


def all_reduce_sum(value: Any, env: DistEnv) -> Any:
    """Sum of `value` (a number or a tensor) over all ranks; unchanged when not distributed."""
    return _all_reduce(value, env, average=False)


def all_reduce_mean(value: Any, env: DistEnv) -> Any:
    """Mean of `value` over all ranks; unchanged when not distributed."""
    return _all_reduce(value, env, average=True)


def barrier(env: DistEnv) -> None:
    if env.is_distributed and dist.is_initialized():
        dist.barrier()


def broadcast_object(obj: T, env: DistEnv, src: int = 0) -> T:
    """Rank `src`'s `obj` on every rank (e.g. which checkpoint to resume from)."""
    if not env.is_distributed:
        return obj
    box = [obj]
    dist.broadcast_object_list(box, src=src)
    return box[0]


def run_on_main(fn: Callable[[], T], env: DistEnv) -> T | None:
    """Run `fn` on rank 0 only (e.g. write a checkpoint), then let every rank learn how it went.

    This is the barrier after a save, with one difference: if rank 0 fails, every rank raises
    the same one-line error instead of the others waiting in their next collective until the
    timeout.
    """
    result, failure = None, None
    if env.is_main:
        try:
            result = fn()
        except TorchdoctorError as error:
            failure = error
    if env.is_distributed:
        message = broadcast_object(str(failure) if failure is not None else None, env)
        if message is not None and failure is None:
            raise TorchdoctorError(f"rank 0 failed: {message}")
    if failure is not None:
        raise failure
    return result


def reduce_sums(state: dict, keys: tuple[str, ...], env: DistEnv) -> dict:
    """`state` with the numbers under `keys` summed over all ranks (other entries: this rank's)."""
    if not env.is_distributed:
        return dict(state)
    totals = torch.tensor([float(state[key]) for key in keys], dtype=torch.float64)
    totals = all_reduce_sum(totals, env)
    reduced = dict(state)
    for key, total in zip(keys, totals.tolist()):
        reduced[key] = type(state[key])(total)
    return reduced


def _canonical(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    return obj


def digest(obj: Any) -> str:
    text = json.dumps(_canonical(obj), sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def _describe_difference(values: list[Any]) -> str:
    first = values[0]
    for rank, other in enumerate(values[1:], start=1):
        if isinstance(first, dict) and isinstance(other, dict):
            keys = sorted(k for k in set(first) | set(other) if first.get(k) != other.get(k))
            if keys:
                shown = ", ".join(
                    f"{k}={first.get(k)!r} on rank 0 but {other.get(k)!r} on rank {rank}"
                    for k in keys[:3]
                )
                more = f" (and {len(keys) - 3} more)" if len(keys) > 3 else ""
                return shown + more
        elif first != other:
            return f"{first!r} on rank 0 but {other!r} on rank {rank}"
    return "their digests differ"


def check_agreement(obj: Any, env: DistEnv, what: str) -> None:
    """Raise TorchdoctorError on every rank when `obj` (e.g. the config) differs between ranks."""
    if not env.is_distributed:
        return
    local = {"digest": digest(obj), "value": json.loads(json.dumps(_canonical(obj), default=repr))}
    gathered: list[Any] = [None] * env.world_size
    dist.all_gather_object(gathered, local)
    if len({entry["digest"] for entry in gathered}) > 1:
        detail = _describe_difference([entry["value"] for entry in gathered])
        raise TorchdoctorError(
            f"ranks disagree on {what}: {detail}; start every rank with the same settings"
        )


def rank_zero_only(fn: Callable[..., T]) -> Callable[..., T | None]:
    """Run `fn` on rank 0 only (printing, progress bars, writing files); other ranks get None."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if dist.is_available() and dist.is_initialized() and dist.get_rank() != 0:
            return None
        return fn(*args, **kwargs)

    return wrapper


def teardown(env: DistEnv) -> None:
    """Leave the process group (safe to call twice, or when never set up).

    Also registered at exit, because a process group that outlives the interpreter aborts the
    process ("terminate called without an active exception": gloo's threads release tensors
    after Python is gone). DDP keeps the group alive through reference cycles (model <-> reducer
    <-> trainer), so those are collected here, while the interpreter still runs.
    """
    if env.is_distributed and dist.is_available() and dist.is_initialized():
        gc.collect()
        dist.destroy_process_group()
        gc.collect()
