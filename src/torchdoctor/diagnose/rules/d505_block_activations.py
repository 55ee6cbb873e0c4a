"""D505: a few modules hold most of the step's memory in activations saved for backward.

## What it does
Counts, during one step, the bytes autograd saves for backward (deduplicated by storage) and
the module that saved them. When those activations are a large part of the memory the step's
tensors hold (16 MiB or more, and at least half of parameters, gradients and optimizer state
together: a third of the step's tensors) and a few sibling submodules hold a large share of them beyond their own inputs (which a checkpoint
keeps), it names those modules: the segments where activation checkpointing frees the most. A
block holding nearly everything is replaced by its layers when they are worth checkpointing on
their own (checkpointed one at a time, they are recomputed one at a time). It is a warning when
peak memory is above 80% of capacity, information otherwise.

## Why is this bad
Activations kept for backward grow with the batch and the sequence length and are usually what
limits the batch size. Checkpointing the modules that save most (recomputing their forward in
backward) frees those bytes for about a third more compute in them; autocast halves every
activation; smaller micro-batches with accumulation keep the global batch.

Estimated saving: none (0) in step time; the fix frees memory (a larger batch can then pay).

## Example
```python
class Net(nn.Module):
    def forward(self, x):
        return self.head(self.blocks(self.embed(x)))  # blocks saves most of the activations
```

## Use instead
```python
from torchdoctor import TrainerConfig
config = TrainerConfig(activation_checkpointing=["blocks"])  # names as in the report
# in your own loop:
h = torch.utils.checkpoint.checkpoint(self.blocks, h, use_reentrant=False)
```

## Fix safety
Safe in results (the forward is recomputed exactly; with dropout, the RNG state is replayed by
torch.utils.checkpoint). Costs extra compute in backward.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import ModuleActivations, RunObservation
from torchdoctor.diagnose.rules._common import memory_use, pct
from torchdoctor.diagnose.rules._memory import (
    checkpoint_candidates,
    checkpointing_frees,
    gradient_bytes,
    memory_fixes,
    parameter_bytes,
    size,
    state_bytes,
)

CODE = "D505"
TITLE = "Activations of a few modules dominate memory"
MIN_ACTIVATION_BYTES = 16 * 2**20
# activations at least this share of parameters + gradients + optimizer state: a third or more
# of what the step's tensors hold
MIN_SHARE_OF_FIXED = 0.5
MIN_MODULE_SHARE = 0.4  # of the activations, held by the named modules together
MEMORY_BOUND_USE = 0.80


def _parent(run: RunObservation, candidates: list) -> ModuleActivations | None:
    """The block the candidates belong to, when they are not the root's children."""
    name = candidates[0].name.rpartition(".")[0]
    if not name:
        return None
    return next((m for m in run.memory.activations_by_module if m.name == name), None)


def _fix(candidates: list[ModuleActivations]) -> str:
    names = sorted(m.name for m in candidates)
    first = min(candidates, key=lambda m: m.name)
    if not first.root:
        return (
            f"TrainerConfig(activation_checkpointing={names!r})\n"
            "# own loop, for each named module: h = torch.utils.checkpoint.checkpoint("
            f"model.get_submodule({names[0]!r}), h, use_reentrant=False)"
        )
    # modules of several root models (`Enc1.model`): each checkpointed in its own model
    inner = first.name[len(first.root) + 1 :]
    return (
        "# for each named module, in its own model: h = torch.utils.checkpoint.checkpoint("
        f"{first.root}.get_submodule({inner!r}), h, use_reentrant=False)"
    )


def check(run: RunObservation) -> list[Finding]:
    activations = run.memory.saved_activation_bytes
    if not activations or activations < MIN_ACTIVATION_BYTES:
        return []
    fixed = parameter_bytes(run) + gradient_bytes(run) + state_bytes(run)
    if activations < MIN_SHARE_OF_FIXED * fixed:
        return []
    candidates = checkpoint_candidates(run)
    held = sum(m.bytes for m in candidates)
    if not candidates or held < MIN_MODULE_SHARE * activations:
        return []
    use = memory_use(run)
    bound = use is not None and use >= MEMORY_BOUND_USE
    evidence = [
        f"Autograd saved {size(activations)} for backward in one step (counted by storage), "
        f"beside {size(fixed)} of parameters, gradients and optimizer state.",
    ]
    parent = _parent(run, candidates)
    if parent is not None:
        evidence.append(
            f"{parent.name} ({parent.class_name}) holds {pct(parent.bytes / activations)} of "
            "them; its layers, checkpointed one at a time, are recomputed one at a time."
        )
    evidence += [
        f"{m.name} ({m.class_name}) saved {size(m.bytes)}, {pct(m.bytes / activations)} of them "
        f"({size(m.input_bytes)} of it its input)."
        for m in candidates
    ]
    if use is not None:
        evidence.append(f"Peak memory was {pct(use)} of capacity ({run.memory.source}).")
    fixes = memory_fixes(run)
    evidence += [f"Would free ~{size(f.frees_bytes)}: {f.what}." for f in fixes[:3]]
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity="warning" if bound else "info",
            saving=0.0,
            evidence=evidence,
            fix=_fix(candidates),
            source="docs/techniques/activation-checkpointing.md; PyTorch docs: torch.utils.checkpoint",
            explanation="The modules named here keep most of what backward needs; "
            "checkpointing them frees that memory for recomputation.",
            details={
                "saved_activation_bytes": activations,
                "modules": {m.name: m.bytes for m in candidates},
                "checkpointing_frees_bytes": checkpointing_frees(candidates),
                "fixes": [{"frees_bytes": f.frees_bytes, "what": f.what} for f in fixes],
            },
            saving_how="frees memory, not time; byte counts are estimates from the saved "
            "tensors counted by module",
        )
    ]
