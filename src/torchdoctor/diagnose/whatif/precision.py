"""What-if: the training forward and backward (the replay: a deep copy of the model on the real
batch it last trained on) as the program ran it vs in another precision or kernel setting.

On any device: float64 vs float32 (rule D201), float32 vs `torch.autocast` (D204; bf16 on CPU,
bf16 or fp16 on CUDA). On CUDA only: cudnn.benchmark on (D205), TF32 matmuls and convolutions
(D206), channels_last for a conv net's 4-D inputs under autocast (D207). A global backend flag a
variant sets is put back after every call, so the program's settings outlive the probe.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from functools import partial
from typing import Any

import torch

from torchdoctor.diagnose.observations import WhatIfTiming
from torchdoctor.diagnose.whatif.evaluation import evaluation_replay, timed_forwards
from torchdoctor.diagnose.whatif.guard import compare, compute_clock
from torchdoctor.diagnose.whatif.optimizer import clone_optimizer
from torchdoctor.diagnose.whatif.replay import Replay, copy_model

UNIT = "forward and backward"
FLOAT32_OPTIMIZER = "precision.float32_optimizer"  # the optimizer step on float32 clones
FLOAT32_EVALUATION = "precision.float32_evaluation"  # an evaluation forward of float32 copies


@dataclass(frozen=True)
class EvaluationForward:
    """How the program ran its evaluation forwards: the float32 fix makes them float32 too."""

    with_grad: bool  # most ran with autograd on
    batch: int | None  # their median batch (None: the training batch's)


def convert_tensors(value: Any, convert: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    """`value` with every tensor in its tuples, lists and dicts replaced by `convert(tensor)`."""
    if isinstance(value, torch.Tensor):
        return convert(value)
    if isinstance(value, dict):
        return {k: convert_tensors(v, convert) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(convert_tensors(v, convert) for v in value)
    return value


def _float64_to_float32(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.float() if tensor.dtype == torch.float64 else tensor


def _channels_last(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.contiguous(memory_format=torch.channels_last) if tensor.dim() == 4 else tensor


def autocast_context(device_type: str, dtype: str | None):
    """The program's autocast (dtype name such as "bfloat16"), or nothing when it had none."""
    if not dtype:
        return nullcontext()
    return torch.autocast(device_type, dtype=getattr(torch, dtype))


def _under(replay: Replay, context: Callable[[], Any]) -> Callable[[], None]:
    def run() -> None:
        with context():
            replay.forward_backward()

    return run


@contextmanager
def _default_dtype(dtype: torch.dtype) -> Iterator[None]:
    """Tensors the forward creates follow the model's new dtype (a program that set the default
    to float64 would otherwise mix float64 with the float32 copy)."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(previous)


@contextmanager
def _backend_flags(**flags: bool) -> Iterator[None]:
    """Set torch.backends flags ("cudnn_benchmark", "cudnn_tf32", "matmul_tf32") for one call."""
    where = {
        "cudnn_benchmark": (torch.backends.cudnn, "benchmark"),
        "cudnn_tf32": (torch.backends.cudnn, "allow_tf32"),
        "matmul_tf32": (torch.backends.cuda.matmul, "allow_tf32"),
    }
    previous = {name: getattr(*where[name]) for name in flags}
    try:
        for name, value in flags.items():
            setattr(*where[name], value)
        yield
    finally:
        for name, value in previous.items():
            setattr(*where[name], value)


def _compare(
    replay: Replay, as_run: Callable[[], None], fix: Callable[[], None], name: str,
    setting: str, allowance_s: float,
) -> WhatIfTiming:  # fmt: skip
    device = replay.device_type
    return compare(name, UNIT, setting, (as_run, fix), device, allowance_s, compute_clock(device))


def _float32(replay: Replay) -> Replay:
    """A float32 copy of the replay's model on float32 copies of its float64 inputs."""
    return Replay(
        copy_model(replay.model).float(),
        convert_tensors(replay.args, _float64_to_float32),
        convert_tensors(replay.kwargs, _float64_to_float32),
        replay.device_type,
    )


def measure_float32(
    replay: Replay,
    optimizer: torch.optim.Optimizer | None,
    allowance_s: float,
    evaluation: EvaluationForward | None = None,
) -> list[WhatIfTiming]:
    """The replay as run (float64 parameters and inputs) vs a float32 copy on float32 inputs;
    the optimizer's step on a clone of its float64 parameters, gradients and state vs on a
    float32 clone (when it has float64 parameters); and, where the program evaluates, an
    evaluation forward of both copies (`--try float32` makes the evaluation float32 too: on a
    script that validated every 4 steps the trial gained 33% where the training step alone
    was stated 6%)."""
    doubles = optimizer is not None and any(
        p.dtype == torch.float64 for group in optimizer.param_groups for p in group["params"]
    )
    parts = 1 + doubles + (evaluation is not None)
    single = _float32(replay)
    timings = [
        _compare(
            replay,
            replay.forward_backward,
            _under(single, lambda: _default_dtype(torch.float32)),
            "precision.float32",
            "float32 model and inputs",
            allowance_s / parts,
        )
    ]
    del single
    if evaluation is not None:
        timings.append(_float32_evaluation(replay, evaluation, allowance_s / parts))
    if optimizer is not None and doubles:
        try:
            timings.append(_float32_optimizer(optimizer, allowance_s / parts))
        except (TypeError, RuntimeError, ValueError):  # a step that needs a closure (LBFGS)
            pass  # the forward and backward timing stands alone
    return timings


def _float32_evaluation(
    replay: Replay, evaluation: EvaluationForward, allowance_s: float
) -> WhatIfTiming:
    """An evaluation forward (eval mode, the program's grad mode, the evaluation's batch) of the
    float64 copy vs a float32 one."""
    doubles = evaluation_replay(replay, evaluation.batch)
    single = _float32(doubles)

    def forward(copy_: Replay, dtype: torch.dtype) -> Callable[[], None]:
        def run() -> None:
            with torch.set_grad_enabled(evaluation.with_grad), _default_dtype(dtype):
                copy_.forward()

        return run

    doubles.model.eval()
    single.model.eval()
    try:
        return timed_forwards(
            doubles,
            FLOAT32_EVALUATION,
            forward(doubles, torch.get_default_dtype()),
            forward(single, torch.float32),
            "float32 model and inputs",
            allowance_s,
        )
    finally:
        doubles.model.train()


def _float32_optimizer(optimizer: torch.optim.Optimizer, allowance_s: float) -> WhatIfTiming:
    device_type = next(p for g in optimizer.param_groups for p in g["params"]).device.type
    variants = (clone_optimizer(optimizer).step, clone_optimizer(optimizer, torch.float32).step)
    return compare(
        FLOAT32_OPTIMIZER,
        "optimizer step",
        "float32 parameters and state",
        variants,
        device_type,
        allowance_s,
        compute_clock(device_type),
    )


def native_bf16_cpu(cpuinfo: str = "/proc/cpuinfo") -> bool | None:
    """Does this x86 CPU compute bf16 natively (AVX512-BF16 or AMX)? None: cannot tell (not
    Linux, not x86): then the autocast what-if measures it."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as file:
            flags = next((line for line in file if line.startswith("flags")), "")
    except OSError:
        return None
    words = set(flags.split())
    if not words & {"sse2", "avx2"}:
        return None
    return bool(words & {"avx512_bf16", "amx_bf16"})


def autocast_dtypes(device_type: str) -> list[str]:
    """The half precisions worth timing on this device: bf16 on CPU; on CUDA bf16 where the GPU
    supports it (no loss scaling needed), else fp16."""
    if device_type == "cpu":
        return ["bfloat16"]
    if device_type == "cuda":
        return ["bfloat16"] if torch.cuda.is_bf16_supported() else ["float16"]
    return []


def measure_autocast(replay: Replay, allowance_s: float) -> list[WhatIfTiming]:
    """The replay in float32 vs under torch.autocast in each half precision of the device."""
    timings = []
    dtypes = autocast_dtypes(replay.device_type)
    for dtype in dtypes:
        timings.append(
            _compare(
                replay,
                replay.forward_backward,
                _under(replay, partial(autocast_context, replay.device_type, dtype)),
                f"precision.autocast.{dtype}",
                f'torch.autocast("{replay.device_type}", dtype=torch.{dtype})',
                allowance_s / len(dtypes),
            )
        )
    return timings


def measure_cuda_backends(
    replay: Replay, autocast: str | None, cudnn_benchmark: bool, tf32: bool, allowance_s: float
) -> list[WhatIfTiming]:
    """CUDA only: the replay (under the program's autocast) with cudnn.benchmark on and with TF32
    on, each against the flags as the program left them."""
    if replay.device_type != "cuda":
        return []
    variants = []
    if cudnn_benchmark:
        variants.append(("cuda.cudnn_benchmark", "torch.backends.cudnn.benchmark = True",
                         {"cudnn_benchmark": True}))  # fmt: skip
    if tf32:
        variants.append(("cuda.tf32", 'torch.set_float32_matmul_precision("high")',
                         {"matmul_tf32": True, "cudnn_tf32": True}))  # fmt: skip
    timings = []
    for name, setting, flags in variants:
        as_run = _under(replay, lambda: autocast_context("cuda", autocast))

        def fix(flags=flags) -> None:
            with _backend_flags(**flags), autocast_context("cuda", autocast):
                replay.forward_backward()

        timings.append(_compare(replay, as_run, fix, name, setting, allowance_s / len(variants)))
    return timings


def measure_channels_last(replay: Replay, autocast: str | None, allowance_s: float):
    """CUDA only: the replay under the program's autocast vs a channels_last copy of the model
    on channels_last 4-D inputs."""
    if replay.device_type != "cuda":
        return []
    model = copy_model(replay.model)
    model.to(memory_format=torch.channels_last)  # type: ignore[call-overload]  # not in the stubs
    nhwc = Replay(
        model,
        convert_tensors(replay.args, _channels_last),
        convert_tensors(replay.kwargs, _channels_last),
        replay.device_type,
    )
    timing = _compare(
        replay,
        _under(replay, lambda: autocast_context("cuda", autocast)),
        _under(nhwc, lambda: autocast_context("cuda", autocast)),
        "cuda.channels_last",
        "model and inputs in torch.channels_last",
        allowance_s,
    )
    return [timing]
