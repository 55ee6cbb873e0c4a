"""D502: optimizer state takes a large share of memory in a memory-bound run.

## What it does
Reports (as information), when peak memory is 80% or more of capacity, an optimizer whose state
is 25% or more of the peak, for example Adam's two moments (twice the parameters). Also, at any
memory use, when the optimizer state (16 MiB or more) is the largest part of what the step's
tensors hold: the largest of parameters, gradients, state and the activations saved for backward
(counted by storage), and 40% or more of them together (Adam's state is at most half: 2x the
parameters beside 1x parameters and 1x gradients).

## Why is this bad
Adam and AdamW keep two float32 tensors per parameter, RMSprop one, SGD with momentum one, plain
SGD none. For a large model that state, not the activations, is what fills the device.

Estimated saving: none (0) in step time; the fix frees memory.

## Example
```python
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)  # state: 2x the parameters
```

## Use instead
```python
# across GPUs: shard the state (ZeroRedundancyOptimizer or FSDP)
from torch.distributed.optim import ZeroRedundancyOptimizer
optimizer = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.AdamW, lr=1e-3)
# on one GPU: an optimizer with less state, e.g. SGD with momentum (1x), re-tuned
```

## Fix safety
Changes semantics when switching optimizer (different updates; re-tune). Sharding with
ZeroRedundancyOptimizer or FSDP keeps the updates.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import gib, memory_use, pct
from torchdoctor.diagnose.rules._memory import gradient_bytes, parameter_bytes, size

CODE = "D502"
TITLE = "Optimizer state fills a large share of memory"
MEMORY_BOUND_USE = 0.80
MIN_STATE_SHARE = 0.25
DOMINANT_SHARE = 0.4  # of parameters + gradients + state + saved activations (Adam: at most 0.5)
MIN_DOMINANT_BYTES = 16 * 2**20


def _dominating(run: RunObservation, state: int) -> list[str]:
    """Evidence when the state is most of the step's tensor memory (any memory use)."""
    activations = run.memory.saved_activation_bytes
    if activations is None or state < MIN_DOMINANT_BYTES:
        return []
    parts = {
        "parameters": parameter_bytes(run),
        "gradients": gradient_bytes(run),
        "optimizer state": state,
        "activations": activations,
    }
    total = sum(parts.values())
    if state < DOMINANT_SHARE * total or state < max(parts.values()):
        return []
    held = ", ".join(f"{name} {size(n)}" for name, n in parts.items())
    return [f"Optimizer state is {pct(state / total)} of the step's tensors ({held})."]


def check(run: RunObservation) -> list[Finding]:
    use = memory_use(run)
    peak = run.memory.peak_bytes
    state = run.memory.optimizer_state_bytes or sum(o.state_bytes for o in run.optimizers)
    if not state:
        return []
    evidence = _dominating(run, state)
    if use is not None and use >= MEMORY_BOUND_USE and peak and state / peak >= MIN_STATE_SHARE:
        evidence = [
            f"Peak memory was {pct(use)} of capacity ({gib(peak)}).",
            f"Optimizer state took {gib(state)}, {pct(state / peak)} of the peak.",
        ]
    if not evidence:
        return []
    evidence += [
        f"{o.class_name}: state {size(o.state_bytes)} for {size(o.param_bytes)} of parameters "
        f"({o.state_bytes / o.param_bytes:.1f}x)."
        for o in run.optimizers
        if o.param_bytes and o.state_bytes
    ]
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity="info",
            saving=0.0,
            evidence=evidence,
            fix="# several GPUs: shard the state\n"
            "optimizer = ZeroRedundancyOptimizer(model.parameters(), "
            "optimizer_class=torch.optim.AdamW, lr=lr)\n"
            "# one GPU: an optimizer with less state (SGD momentum: 1x), re-tuned",
            source="docs/techniques/optimizer-state-memory.md",
            explanation="Adam keeps two moments per parameter; in a memory-bound run that "
            "state is a large part of the peak.",
            changes_semantics=True,
            details={"optimizer_state_bytes": state, "peak_bytes": peak},
        )
    ]
