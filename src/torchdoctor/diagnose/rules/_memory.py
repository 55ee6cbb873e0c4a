"""Shared memory arithmetic for the D5xx rules: sizes, what the step's tensors hold, where
activation checkpointing pays, and the memory fixes ranked by the bytes they would free.

Every byte count a fix quotes is an estimate built from measured parts (saved tensors counted
by module, parameter, gradient and optimizer-state bytes); the rules say so.
"""

from __future__ import annotations

from dataclasses import dataclass

from torchdoctor.diagnose.observations import ModuleActivations, RunObservation
from torchdoctor.diagnose.rules._common import uses_autocast

# Look inside a block when it alone holds more than this share of the activations: its layers
# may be better segments (checkpointed one at a time, they are recomputed one at a time).
DESCEND_SHARE = 0.7
# A segment is worth checkpointing when what it saves beyond its own input (which a checkpoint
# keeps) is at least this share of what it saves: a single elementwise layer saves only its input.
MIN_INTERNAL_SHARE = 0.25
CANDIDATES = 4  # modules named for checkpointing


def size(n_bytes: float) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n_bytes) >= scale:
            return f"{n_bytes / scale:.1f} {unit}"
    return f"{n_bytes:.0f} B"


def activation_bytes(run: RunObservation) -> int | None:
    """Activations kept for backward: counted (saved tensors) when available, else the CUDA
    estimate (peak minus parameters, gradients and optimizer state)."""
    memory = run.memory
    return memory.saved_activation_bytes or memory.activations_bytes


def gradient_bytes(run: RunObservation) -> int:
    memory = run.memory
    if memory.gradient_bytes is not None:
        return memory.gradient_bytes
    return sum(m.parameter_bytes for m in run.models if m.trainable_parameters)


def state_bytes(run: RunObservation) -> int:
    return run.memory.optimizer_state_bytes or sum(o.state_bytes for o in run.optimizers)


def parameter_bytes(run: RunObservation) -> int:
    return run.memory.parameter_bytes or sum(m.parameter_bytes for m in run.models)


def internal_bytes(module: ModuleActivations) -> int:
    """What checkpointing the module frees after its forward: its saved tensors but its input."""
    return max(0, module.bytes - module.input_bytes)


def _worth(module: ModuleActivations) -> bool:
    return internal_bytes(module) >= MIN_INTERNAL_SHARE * module.bytes > 0


def checkpoint_candidates(run: RunObservation) -> list[ModuleActivations]:
    """Sibling submodules (not the root) holding most activations beyond their inputs: the
    segments to checkpoint, largest first. A block holding nearly everything is replaced by its
    layers when at least two of them are worth checkpointing on their own."""
    entries = [m for m in run.memory.activations_by_module if m.depth >= 1 and m.name]
    total = activation_bytes(run) or 0
    if not entries or total <= 0:
        return []
    level = sorted((m for m in entries if m.depth == 1 and _worth(m)), key=lambda m: -m.bytes)
    while level and level[0].bytes > DESCEND_SHARE * total and level[0].has_children:
        children = [m for m in entries if _child_of(m.name, level[0].name) and _worth(m)]
        if len(children) < 2:
            break
        level = sorted(children, key=lambda m: -m.bytes)
    return level[:CANDIDATES]


def checkpointing_frees(candidates: list[ModuleActivations]) -> int:
    """Bytes freed from what forward keeps: each segment's saved tensors but its input. With
    several segments, the largest is held again while it is recomputed in backward."""
    freed = sum(internal_bytes(m) for m in candidates)
    if len(candidates) > 1:
        freed -= max(m.bytes for m in candidates)
    return max(0, freed)


def _child_of(name: str, parent: str) -> bool:
    return name.startswith(parent + ".") and "." not in name[len(parent) + 1 :]


@dataclass
class MemoryFix:
    frees_bytes: int
    what: str  # one line, with the estimate's basis
    code: str


def memory_fixes(run: RunObservation) -> list[MemoryFix]:
    """The applicable fixes, the ones freeing most bytes first."""
    fixes: list[MemoryFix] = []
    activations = activation_bytes(run) or 0
    device = "cuda" if run.environment.device_type == "cuda" else "cpu"
    if activations and not uses_autocast(run):
        dtype = "bfloat16"
        fixes.append(MemoryFix(
            activations // 2,
            "autocast: activations stored in 16 bits, about half of the float32 ones",
            f'with torch.autocast("{device}", dtype=torch.{dtype}):\n'
            "    loss = criterion(model(x), y)",
        ))  # fmt: skip
    candidates = checkpoint_candidates(run)
    frees = checkpointing_frees(candidates)
    if frees and not any(m.activation_checkpointing for m in run.models):
        names = sorted(m.name for m in candidates)
        fixes.append(MemoryFix(
            frees,
            f"activation checkpointing of {', '.join(names)}: they save "
            f"{size(sum(m.bytes for m in candidates))} for backward, kept only as their inputs "
            "and recomputed in backward (~30% more compute in them)",
            f"TrainerConfig(activation_checkpointing={names!r})\n"
            f"# in your own loop: h = torch.utils.checkpoint.checkpoint(model.{names[0]}, h, "
            "use_reentrant=False)",
        ))  # fmt: skip
    if activations:
        fixes.append(MemoryFix(
            activations // 2,
            "half the micro-batch, 2 accumulation steps: the same global batch, half the "
            "activations",
            "for xs, ys in zip(x.chunk(2), y.chunk(2)):\n"
            "    (criterion(model(xs), ys) / 2).backward()\n"
            "optimizer.step()",
        ))  # fmt: skip
    if any(o.set_to_none is False for o in run.optimizers):
        fixes.append(MemoryFix(
            gradient_bytes(run),
            "zero_grad(set_to_none=True): gradients freed between steps instead of zeroed",
            "optimizer.zero_grad(set_to_none=True)",
        ))  # fmt: skip
    state, params = state_bytes(run), parameter_bytes(run)
    if state and params and state > 1.5 * params:
        fixes.append(MemoryFix(
            state - params,
            f"a lighter optimizer state: {size(state)} now ({state / params:.1f}x the "
            "parameters); SGD with momentum keeps 1x (re-tune), or shard it across GPUs",
            "optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)\n"
            "# several GPUs: ZeroRedundancyOptimizer(params, optimizer_class=torch.optim.AdamW)",
        ))  # fmt: skip
    return sorted(fixes, key=lambda f: -f.frees_bytes)
