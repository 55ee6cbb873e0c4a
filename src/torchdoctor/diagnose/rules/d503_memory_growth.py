"""D503: memory grows with the step index, or tensors of earlier steps are kept alive.

## What it does
Reports memory in use at the end of each step (CUDA allocator, or the process's resident memory
on CPU) that rises steadily over the measured steps, with the growth per step (on CPU, when no
kept tensor is found, only a rise in most steps: a few jumps are the allocator taking new
arenas, not a leak; and only where the C heap's bytes in use grew with it: resident memory also
keeps the high-water mark of steps whose activations grow, which is not memory kept across
steps. Where the heap cannot be read, the rise is information); and names what
keeps memory alive when it is found: losses, loss terms (a multi-task dict of losses beside the
summed loss passed to backward()) or model outputs of earlier steps that are still referenced
later, with or without their autograd graph, the container that holds them and the
user's line that made (or backpropagated) them; and a tensor in the training loop's variables
whose autograd graph spans several steps (`total_loss += loss`). A history rebuilt from itself
every step (`seen = torch.cat([seen, batch])`, read by its size at the memory probe's checks)
is a growth of its own, by the bytes it gains a step: counted, so the process's resident memory
(which the allocator returns and takes back by large chunks) does not decide it.

## Why is this bad
Memory that grows every step runs out sooner or later: the job dies hours in, with an
out-of-memory error far from its cause. A loss appended to a list keeps its whole autograd
graph referenced (`grad_fn` and everything it points to); a model output kept for a metric
keeps the output tensor and, without `.detach()`, its graph.

Estimated saving: none (0) in step time; the fix stops the growth.

## Example
```python
losses = []
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss)  # every step's graph stays referenced
```

## Use instead
```python
losses.append(loss.item())  # a Python float (one sync), or loss.detach() to stay on device
```

## Fix safety
Safe: `.detach()` and `.item()` keep the value and drop the graph; nothing that trains changes.
"""

from __future__ import annotations

from typing import Literal

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import GrowingTensor, RetainedTensors, RunObservation
from torchdoctor.diagnose.rules._common import measured_steps, median
from torchdoctor.diagnose.rules._growth import linear_trend
from torchdoctor.diagnose.rules._memory import size

CODE = "D503"
TITLE = "Memory grows with every step"
MIN_STEPS = 5
MIN_GROWTH_BYTES = 4 * 2**20  # over the measured steps: below it, allocator noise
# process RSS (CPU) also grows with the allocator's arenas and torch's caches in a run's first
# steps (a clean nn.GRU run: ~0.6 MiB per step), and with diagnose's own per-step records (a
# clean word-LM run: 0.5 MiB per step under diagnose, flat when run plainly; 43 MiB over a
# whole-cycle run of 78 steps): without a tensor found kept alive, only a growth both fast and
# large is a finding
MIN_RSS_GROWTH_PER_STEP = 2 * 2**20
MIN_RSS_GROWTH_BYTES = 32 * 2**20
# ... and only a growth in most steps: a leak adds in every step, while the allocator grows the
# heap by a few jumps of megabytes (a recommender that reallocates 10 MiB embedding gradients
# each step: +30 MiB in 3 jumps over 115 steps, 4 KiB in a typical step, fit 0.9)
MIN_STEADY_TO_SLOPE = 0.25  # the median step-to-step growth, against the fitted slope
MIN_FIT = 0.9  # correlation of memory with the step index
MIN_RETAINED_BYTES = 2**20  # detached tensors kept without a graph: only when this large
# the C heap's bytes in use must grow by this share of the resident memory's rise over the same
# steps: torchdiffeq's CNF (dopri5 takes more steps as it trains, each step's activations peak
# higher) raised its RSS 84 MiB over 13 steps, its heap in use staying flat
MIN_HEAP_SHARE = 0.5
RSS_WORDS = "resident memory cannot tell tensors alive from memory the allocator keeps for reuse"


def _growth(run: RunObservation) -> tuple[float, int] | None:
    """(bytes per step, total growth) of the step-end memory, when it rises steadily."""
    points = [(s.index, s.memory_bytes) for s in measured_steps(run) if s.memory_bytes]
    if len(points) < MIN_STEPS:
        return None
    trend = linear_trend([float(i) for i, _ in points], [float(b) for _, b in points])
    if trend is None:
        return None
    slope, fit = trend
    total = points[-1][1] - points[0][1]
    if slope <= 0 or fit < MIN_FIT or total < MIN_GROWTH_BYTES:
        return None
    return slope, total


def _growing_history(run: RunObservation) -> tuple[GrowingTensor, float] | None:
    """(history, bytes it gains a step) of the loop's largest growing history, when that adds
    MIN_GROWTH_BYTES over the measured steps."""
    found = []
    for history in run.memory.growing:
        if history.container:  # a list read whole: its items' bytes are not all counted
            continue
        steps = max(1, history.last_step - history.first_step)
        per_element = history.bytes / max(1, history.last_numel)
        per_step = per_element * (history.last_numel - history.first_numel) / steps
        if per_step * len(measured_steps(run)) >= MIN_GROWTH_BYTES:
            found.append((history, per_step))
    return max(found, key=lambda found: found[1]) if found else None


def _history_finding(history: GrowingTensor, per_step: float) -> Finding:
    where = f" at {history.location}" if history.location else ""
    return Finding(
        id=CODE,
        title=TITLE,
        severity="warning",
        saving=0.0,
        evidence=[
            f"`{history.name}` is rebuilt from itself{where} and holds {size(per_step)} more at "
            f"every step: {history.first_numel:,} elements at step {history.first_step}, "
            f"{history.last_numel:,} ({size(history.bytes)}) at step {history.last_step} (its "
            "sizes, read at the checks; the process's memory rises with it by the allocator's "
            "chunks)."
        ],
        fix="pieces.append(batch_values)  # a list of the pieces; torch.cat(pieces) when read,\n"
        "# or a running statistic (sum, count) instead of every value kept",
        source="docs/techniques/memory-growth.md",
        explanation="A tensor that keeps everything seen so far grows until the run dies of "
        "out-of-memory.",
        details={
            "growth_bytes_per_step": per_step,
            "history": history.name,
            "history_location": history.location,
        },
    )


def _typical_increment(run: RunObservation) -> float:
    """The median growth of the step-end memory from one measured step to the next."""
    values = [float(s.memory_bytes) for s in measured_steps(run) if s.memory_bytes]
    return median([b - a for a, b in zip(values, values[1:])])


KIND_ORDER = {"graph": 0, "loss": 1, "term": 2, "output": 3}  # the most specific cause first


def _culprits(run: RunObservation) -> list[RetainedTensors]:
    kept = [r for r in run.memory.retained if r.with_graph or r.bytes >= MIN_RETAINED_BYTES]
    return sorted(kept, key=lambda r: KIND_ORDER.get(r.kind, 3))


def _describe(r: RetainedTensors) -> str:
    if r.kind == "graph":
        return (
            f"A tensor that accumulates across steps keeps the autograd graphs of about "
            f"{r.steps_alive} steps: {r.holder}, in the loop at {r.location}."
        )
    what = {
        "loss": "loss passed to backward()",
        "term": "loss term (a scalar in the loss, not the tensor passed to backward())",
    }.get(r.kind, "model output")
    made = "computed at" if r.kind == "output" else "backpropagated at"
    graph = "with its autograd graph (no .detach())" if r.with_graph else "detached"
    held = f", held by {r.holder}" if r.holder else ""
    return (
        f"The {what} of {r.steps_alive} of {r.steps_checked} earlier steps is still referenced, "
        f"{graph}{held}; {made} {r.location}."
    )


def _heap_growth(run: RunObservation) -> tuple[int, int, int, int] | None:
    """(first step, last step, the heap's growth in use, the resident memory's growth) between
    the first and last heap readings of the measured steps, or None with fewer than two."""
    at = {s.index: s.memory_bytes for s in measured_steps(run) if s.memory_bytes}
    readings = [(step, heap) for step, heap in run.memory.heap_in_use if step in at]
    if len(readings) < 2:
        return None
    (first, heap0), (last, heap1) = readings[0], readings[-1]
    return first, last, heap1 - heap0, at[last] - at[first]


def check(run: RunObservation) -> list[Finding]:
    growth = _growth(run)
    culprits = _culprits(run)
    source = run.memory.step_source or run.memory.source
    severity: Literal["warning", "info"] = "warning"
    title, heap_words = TITLE, ""
    if growth and not culprits and source == "process_rss":
        slope, total = growth
        heap = _heap_growth(run)
        if slope < MIN_RSS_GROWTH_PER_STEP or total < MIN_RSS_GROWTH_BYTES:
            growth = None
        elif _typical_increment(run) < slope * MIN_STEADY_TO_SLOPE:
            growth = None  # a few jumps (the allocator taking a new arena), not every step
        elif heap is None:
            severity, title = "info", "Process memory rose with every step (no kept tensor found)"
            heap_words = f" No kept tensor was found, and {RSS_WORDS}."
        elif heap[2] < MIN_HEAP_SHARE * max(heap[3], 1):
            growth = None  # the allocator's high-water mark: nothing more is in use
        else:
            heap_words = (
                f" The C heap's bytes in use grew by {size(heap[2])} from step {heap[0]} to "
                f"step {heap[1]} (resident memory: {size(heap[3])})."
            )
    history = _growing_history(run) if growth is None and not culprits else None
    if history is not None:
        return [_history_finding(*history)]
    if growth is None and not culprits:
        return []
    evidence = []
    details: dict = {}
    if growth is not None:
        slope, total = growth
        evidence.append(
            f"Memory at the end of each step grew by {size(slope)} per step "
            f"({size(total)} over {len(run.steps)} measured steps; {source}).{heap_words}"
        )
        details.update(growth_bytes_per_step=slope, growth_bytes=total)
    evidence += [_describe(r) for r in culprits]
    if culprits:
        details["retained"] = [r.kind for r in culprits]
        first = culprits[0]
        name = first.holder.split("`")[1] if "`" in first.holder else "history"
        value = "output" if first.kind == "output" else "loss"
        fix = f"{name}.append({value}.item())  # or {value}.detach(): the value, not the graph"
        if first.kind == "graph":
            fix = f"{name} += loss.item()  # or loss.detach(): the value, not the graph"
    else:
        fix = (
            "# keep values, not tensors, across steps: .item() or .detach()\n"
            "history.append(loss.item())\n"
            "# and drop references to old batches, outputs and caches"
        )
    return [
        Finding(
            id=CODE,
            title=title if growth is not None else "Tensors of earlier steps are kept alive",
            severity=severity,
            saving=0.0,
            evidence=evidence,
            fix=fix,
            source="docs/techniques/memory-growth.md; PyTorch FAQ (accumulating history across "
            "the training loop)",
            explanation="Memory held from one step to the next adds up until the run dies of "
            "out-of-memory; a kept loss keeps its autograd graph.",
            details=details,
        )
    ]
