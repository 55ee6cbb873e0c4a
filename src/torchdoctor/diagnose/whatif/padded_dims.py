"""What-if (CUDA under autocast only): the model's `nn.Linear` layers whose sizes are not
multiples of 8, forward and backward as they are vs padded up to multiples of 8 (rule D208's
fix), under the program's autocast. The shapes are those each layer saw in one replayed forward
of the model's copy; the inputs are random (a matmul's time does not depend on the values) and
the layers are fresh ones of the same sizes, so nothing of the program's is touched. Timed per
training step: all such layer calls together, as run vs padded, interleaved. On a CPU run the
rule is silent and nothing is planned (tensor cores are what padding serves)."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from torchdoctor.diagnose.observations import WhatIfTiming
from torchdoctor.diagnose.whatif.guard import compare
from torchdoctor.diagnose.whatif.precision import autocast_context
from torchdoctor.diagnose.whatif.replay import Replay

TILE = 8


def padded(size: int) -> int:
    return -(-size // TILE) * TILE


def _calls(replay: Replay) -> list[tuple[nn.Linear, torch.Size]]:
    """(layer, input shape) of each call of an unaligned Linear layer in one replayed forward."""
    seen: list[tuple[nn.Linear, torch.Size]] = []
    layers = [
        m
        for m in replay.model.modules()
        if isinstance(m, nn.Linear) and (m.in_features % TILE or m.out_features % TILE)
    ]

    def record(module, args, output) -> None:
        if args and isinstance(args[0], torch.Tensor):
            seen.append((module, args[0].shape))

    handles = [layer.register_forward_hook(record) for layer in layers]
    try:
        with torch.no_grad():
            replay.forward()
    finally:
        for handle in handles:
            handle.remove()
    return seen


def _layer_step(
    in_features: int, out_features: int, bias: bool, shape: torch.Size, device, autocast
) -> Callable[[], None]:
    layer = nn.Linear(in_features, out_features, bias=bias, device=device)
    x = torch.randn(*shape[:-1], in_features, device=device, requires_grad=True)

    def run() -> None:
        with autocast_context("cuda", autocast):
            output = layer(x)
        output.float().sum().backward()
        layer.zero_grad(set_to_none=True)
        x.grad = None

    return run


def measure_padded(replay: Replay, autocast: str | None, allowance_s: float) -> list[WhatIfTiming]:
    """The unaligned Linear calls of one step as they are vs padded (nothing off CUDA)."""
    if replay.device_type != "cuda":
        return []
    calls = _calls(replay)
    if not calls:
        return []
    device = next(replay.model.parameters()).device
    as_run = [
        _layer_step(m.in_features, m.out_features, m.bias is not None, shape, device, autocast)
        for m, shape in calls
    ]
    aligned = [
        _layer_step(
            padded(m.in_features),
            padded(m.out_features),
            m.bias is not None,
            shape,
            device,
            autocast,
        )
        for m, shape in calls
    ]
    return [
        compare(
            "dims.padded_to_8",
            "training step's unaligned Linear calls",
            f"{len(calls)} Linear call(s) padded to multiples of {TILE}",
            (lambda: [step() for step in as_run], lambda: [step() for step in aligned]),
            "cuda",
            allowance_s,
        )
    ]
