"""Run the model's forward pass in mixed precision (seed 003 "Faster training with AMP", 004).

The root model's forward runs under `torch.amp.autocast`: bfloat16 where the device supports it
(CUDA with bf16, or a CPU with bf16 kernels), else float16 on CUDA with a `torch.amp.GradScaler`
driven through the script's own optimizer (the loss is scaled before backward, `optimizer.step`
becomes `scaler.step(optimizer)` + `scaler.update()`, and gradient clipping unscales first).
Floating outputs are cast back to float32, so the loss is computed in float32 as autocast
would. A precision change: losses move by up to a few percent over a short run.
"""

from __future__ import annotations

import torch

from torchdoctor.techniques import finding_codes_for_fix
from torchdoctor.trials.fixes._common import cast_low_precision_to_float32, cpu_bf16_supported

NAME = "autocast"
SUMMARY = "torch.amp.autocast(device, dtype=bfloat16 | float16 + GradScaler) around the forward"
TOLERANCE = 5e-2
TOLERANCE_REASON = "bf16/fp16 keep 8/11 mantissa bits (~0.4%/0.05% per op), compounding per step"
FINDING_CODES = finding_codes_for_fix(NAME)  # from the technique registry
PERMANENT = """\
with torch.amp.autocast(device_type, dtype=torch.bfloat16):  # float16 + GradScaler if no bf16
    output = model(inputs)
    loss = loss_fn(output, targets)"""


def applies_to(run) -> bool:
    if run is None or run.precision.autocast_forwards:
        return False
    env = run.environment
    return env.device_type == "cuda" or env.bf16_supported


def choose_dtype(device_type: str) -> torch.dtype:
    if device_type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if cpu_bf16_supported():
        return torch.bfloat16
    raise RuntimeError("this CPU has no bfloat16 kernels; autocast would only slow it down")


def apply(hooks) -> None:
    dtype = choose_dtype(hooks.device_type)

    def forward(module, call, args, kwargs):
        if torch.is_autocast_enabled():  # the script already uses autocast here
            return call(module, args, kwargs)
        hooks.mark_used(NAME)
        with torch.amp.autocast(hooks.device_type, dtype=dtype):
            output = call(module, args, kwargs)
        return cast_low_precision_to_float32(output)

    hooks.around_forward.append(forward)
    if dtype == torch.float16:
        _drive_grad_scaler(hooks)


def _drive_grad_scaler(hooks) -> None:
    scaler = torch.amp.GradScaler("cuda")
    unscaled: set[int] = set()

    def scale(loss):
        return scaler.scale(loss) if loss.requires_grad and loss.numel() == 1 else loss

    def step(optimizer, call, args, kwargs):
        result = scaler.step(optimizer, *args, **kwargs)  # unscales unless clipping already did
        scaler.update()
        unscaled.clear()
        return result

    original_clip = torch.nn.utils.clip_grad_norm_

    def clip_grad_norm_(parameters, *args, **kwargs):
        parameters = list(parameters) if not isinstance(parameters, torch.Tensor) else parameters
        for optimizer in hooks.optimizers:
            if id(optimizer) not in unscaled:
                scaler.unscale_(optimizer)
                unscaled.add(id(optimizer))
        return original_clip(parameters, *args, **kwargs)

    hooks.around_backward.append(scale)
    hooks.around_step.append(step)
    hooks.set_attribute(torch.nn.utils, "clip_grad_norm_", clip_grad_norm_)
