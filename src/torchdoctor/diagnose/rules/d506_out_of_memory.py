"""D506: the program ran out of memory; what filled it, and the fixes ranked by bytes freed.

## What it does
When the program dies with a CUDA out-of-memory error or a CPU allocation failure, reports
where (step, phase, module, the user's line), what filled memory at that moment (parameters,
gradients, optimizer state, activations by module, and on CUDA memory reserved by the caching
allocator but free, i.e. fragmentation), and the fixes ranked by the bytes they would free:
autocast, activation checkpointing of the named modules, a smaller micro-batch with gradient
accumulation (same global batch), `zero_grad(set_to_none=True)`, a lighter optimizer state.

## Why is this bad
An out-of-memory error says how much was requested, not why memory was full. Knowing whether
activations, optimizer state or fragmentation filled the device decides which fix works.

Estimated saving: none in step time; the run completes instead of crashing.

## Example
```python
for x, y in loader:  # batch 512: activations no longer fit
    loss = criterion(model(x), y)  # torch.OutOfMemoryError
```

## Use instead
```python
# the fixes the report ranks, e.g. same global batch in two halves:
for xs, ys in zip(x.chunk(2), y.chunk(2)):
    (criterion(model(xs), ys) / 2).backward()
optimizer.step()
```

## Fix safety
Accumulation and checkpointing keep the results (BatchNorm sees smaller batches); autocast
changes numerics slightly; another optimizer changes the updates (re-tune).
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import OutOfMemoryObservation, RunObservation
from torchdoctor.diagnose.rules._memory import (
    activation_bytes,
    checkpoint_candidates,
    gradient_bytes,
    memory_fixes,
    parameter_bytes,
    size,
    state_bytes,
)

CODE = "D506"
TITLE = "Out of memory"
FRAGMENTED_SHARE = 0.1  # reserved-but-free memory, of the allocated memory


def _where(oom: OutOfMemoryObservation) -> str:
    parts = []
    if oom.step is not None:
        parts.append(f"step {oom.step}")
    if oom.phase:
        parts.append(f"in {oom.phase}")
    if oom.module:
        parts.append(f"inside {oom.module}")
    if oom.location:
        parts.append(f"at {oom.location}")
    return ", ".join(parts) or "outside any training step"


def _filled(run: RunObservation, oom: OutOfMemoryObservation) -> list[str]:
    rows = []
    for what, n_bytes in (
        ("parameters", parameter_bytes(run)),
        ("gradients", gradient_bytes(run) if run.steps or run.memory.gradient_bytes else 0),
        ("optimizer state", state_bytes(run)),
    ):
        if n_bytes:
            rows.append(f"{what} {size(n_bytes)}")
    activations = oom.activations_bytes or activation_bytes(run)
    if activations:
        when = "up to the failure" if oom.activations_bytes else "in a step that fit"
        modules = ", ".join(f"{m.name} {size(m.bytes)}" for m in checkpoint_candidates(run)[:2])
        rows.append(
            f"activations saved for backward {size(activations)} ({when})"
            + (f", most in {modules}" if modules else "")
        )
    if oom.reserved_free_bytes:
        rows.append(f"reserved by the caching allocator but free {size(oom.reserved_free_bytes)}")
    return rows


def _fragmented(oom: OutOfMemoryObservation) -> bool:
    """Free reserved memory would have held the request, or is a tenth of what is allocated."""
    free = oom.reserved_free_bytes or 0
    if not free:
        return False
    enough = oom.requested_bytes is not None and free >= oom.requested_bytes
    return enough or free >= FRAGMENTED_SHARE * (oom.allocated_bytes or 0) > 0


def check(run: RunObservation) -> list[Finding]:
    oom = run.memory.out_of_memory
    if oom is None:
        return []
    evidence = [
        f"The program died with `{oom.message}` ({_where(oom)}), exit code {run.exit_code}."
    ]
    filled = _filled(run, oom)
    if filled:
        evidence.append("Memory held: " + "; ".join(filled) + ".")
    if oom.requested_bytes:
        evidence.append(f"The failed allocation asked for {size(oom.requested_bytes)}.")
    capacity = oom.capacity_bytes
    absurd = bool(oom.requested_bytes and capacity and oom.requested_bytes > capacity)
    if absurd:
        evidence.append(
            f"That one request is more than the whole {size(capacity or 0)}: a shape that grew "
            "by mistake (a broadcast, an outer product, a sequence length) rather than a full "
            f"memory; check the shapes at {oom.location or 'the failing line'}."
        )
    if _fragmented(oom):
        evidence.append(
            f"{size(oom.reserved_free_bytes or 0)} was reserved by the allocator but free, "
            "yet not in one piece large enough (fragmentation): "
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True lets the allocator reuse it."
        )
    fixes = memory_fixes(run)
    evidence += [
        f"Fix {rank}: frees ~{size(f.frees_bytes)} (estimate): {f.what}."
        for rank, f in enumerate(fixes, start=1)
    ]
    fix = fixes[0].code if fixes else "# lower the batch size, or use a device with more memory"
    if absurd:
        fix = f"# no memory fix is enough: find the shape that grew at {oom.location}"
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity="error",
            saving=0.0,
            evidence=evidence,
            fix=fix,
            source="docs/techniques/activation-checkpointing.md, docs/techniques/mixed-precision.md, "
            "docs/techniques/gradient-accumulation.md; PyTorch docs: CUDA semantics (memory management)",
            explanation="Knowing what filled memory (activations, optimizer state, "
            "fragmentation) tells which fix frees enough.",
            details={
                "requested_bytes": oom.requested_bytes,
                "phase": oom.phase,
                "module": oom.module,
                "fixes": [{"frees_bytes": f.frees_bytes, "what": f.what} for f in fixes],
            },
            saving_how="bytes each fix frees are estimates from the measured parts",
        )
    ]
