"""D401: the training step forces host-device synchronizations.

## What it does
Lists the lines in the training step that make the host wait for the device (`.item()`,
`.cpu()`, `.numpy()`, `.tolist()`, `print(tensor)`, `if tensor:`, `torch.cuda.synchronize()`),
with how often each runs per step. On a CUDA device it counts reads of GPU tensors and is a
warning when the GPU measurably idles during the step; on a CPU, where such reads cost next to
nothing, it is information only (each read becomes a sync once the loop runs on a GPU), and reads
of the batch the DataLoader just yielded (or a view of it) are left out: a program on a GPU makes
them on the host, before the batch is moved (`points.numpy()` for a NumPy augmentation).

## Why is this bad
CUDA work is queued asynchronously: the host normally runs ahead, launching the next kernels while
the GPU computes. A sync empties that queue: the host waits for the GPU to finish, then the GPU
waits while the host prepares and launches the next work. Once per step it costs the launch
latency of the next step; several times per step (per-batch metrics, logging every loss) it
serialises the whole loop.

Measured saving: every read in a measured step is timed (the wall time inside the call). Reading
the value every 10th step instead keeps a tenth of the reads: nine tenths of that time is the
saving. On CPU that time is the conversion itself (microseconds: there is no queue to wait for),
so the finding stays information. On CUDA, when the GPU's idle time per step was measured (CUDA
events), the saving is that idle time not explained by waiting for data or copies (the wait the
syncs expose); without it, the time inside the reads (the host waiting for the queue).

## Example
```python
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    running_loss += loss.item()  # waits for the GPU every step
```

## Use instead
```python
running_loss = torch.zeros((), device=device)
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    running_loss += loss.detach()  # stays on the GPU
    if step % 100 == 0:
        print(running_loss.item() / 100)  # one sync every 100 steps
        running_loss.zero_()
```

## Fix safety
Safe: values are unchanged; logged numbers appear less often. Syncs the code needs for control
flow (early stopping on a tensor value) must stay, but can run every N steps.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import (
    clamp,
    mean_step_s,
    on_cuda,
    pct,
    secs,
    severity_for,
    step_profile,
)

CODE = "D401"
TITLE = "Host-device synchronizations inside the training step"
MIN_SYNCS_PER_STEP = 1.0
READ_EVERY = 10  # the fix reads the accumulated value every READ_EVERY-th step


def _gpu_idle_share(run: RunObservation) -> float | None:
    """Mean GPU idle time per step not spent waiting for data or copies, as a share of the step."""
    idle = [s for s in run.steps if s.gpu_idle_s is not None and s.wall_s > 0]
    if not idle:
        return None
    unexplained = [
        max(0.0, (s.gpu_idle_s or 0.0) - s.phases.get("data", 0.0) - s.phases.get("h2d", 0.0))
        for s in idle
    ]
    return clamp(sum(unexplained) / sum(s.wall_s for s in idle))


def _saving(run: RunObservation, sync_s: float, kept: float, step_s: float) -> tuple[float, str]:
    """(share of the step, how) the fix gives back."""
    idle_share = _gpu_idle_share(run) if on_cuda(run) else None
    if idle_share is not None:
        return idle_share, (
            "the GPU's idle time per step outside data loading and copies, measured with CUDA "
            "events: the wait the syncs expose"
        )
    return clamp(sync_s * (1 - kept) / step_s), (
        f"the wall time inside the reads, measured per step ({secs(sync_s)}), less the reads "
        f"kept when the value is read every {READ_EVERY}th step"
    )


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    cuda = on_cuda(run)
    # On a CUDA run only reads of device tensors sync; reads of CPU tensors are free. On a CPU run
    # every read is reported (as information): each one becomes a sync when the loop moves to a
    # GPU, but a read of the DataLoader's batch (NumPy augmentation before `.cuda()`), which a
    # GPU program makes on the host too.
    sites = sorted(
        (s for s in run.sync_sites if (s.device != "cpu" if cuda else not s.loader_batch)),
        key=lambda s: -s.per_step,
    )
    per_step = sum(s.per_step for s in sites)
    if profile is None or per_step < MIN_SYNCS_PER_STEP:
        return []
    sync_s = sum(s.seconds_per_step for s in sites)  # wall time inside the reads, per step
    kept = min(1.0, 1 / (READ_EVERY * per_step))  # what reading every READ_EVERY-th step keeps
    step_s = mean_step_s(run)  # the reads' time is a mean over every measured step too
    saving, how = _saving(run, sync_s, kept, step_s)
    in_reads = f"{secs(sync_s)} per step inside the reads ({pct(sync_s / step_s)} of the step"
    evidence = [f"{_how_often(per_step)} host-device sync(s) per step:"] + [
        f"{s.location}: {s.kind} {_how_often(s.per_step)} per step ({secs(s.seconds_per_step)} "
        "inside)"
        for s in sites[:5]
    ]
    if not cuda:
        evidence.append(
            f"On this CPU run: {in_reads}), the conversion itself with no queue to wait for; on "
            "a GPU each read is a sync that stalls the queue."
        )
    elif (idle := _gpu_idle_share(run)) is not None:
        evidence.append(
            f"The GPU was idle for {pct(idle)} of each step outside data loading and copies "
            f"(step: {secs(profile.step_s)}); {in_reads})."
        )
    else:
        evidence.append(f"{in_reads}): the wait for the GPU's queue and the copy.")
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving) if cuda else "info",
            saving=saving,
            saving_basis="measured",
            saving_how=how,
            evidence=evidence,
            fix=(
                "running_loss += loss.detach()      # instead of loss.item() every step\n"
                "if step % log_every == 0:\n"
                "    print(running_loss.item() / log_every); running_loss.zero_()"
            ),
            source="PyTorch docs: Performance Tuning Guide (avoid unnecessary CPU-GPU "
            "synchronization)",
            explanation="Each sync makes the host wait for the GPU and then the GPU wait for "
            "the host.",
            details={
                "syncs_per_step": per_step,
                "sync_s_per_step": sync_s,
                "sites": [
                    {
                        "location": s.location,
                        "kind": s.kind,
                        "per_step": s.per_step,
                        "seconds_per_step": s.seconds_per_step,
                    }
                    for s in sites
                ],
            },
        )
    ]


def _how_often(per_step: float) -> str:
    """A mean count per step as a reader counts (`3.3`, `1`, `0.01`), not the mean's digits
    (`3.34228`, `0.00784314`: a read in 2 of 255 steps); hundreds as whole numbers (`1058`, not
    `1.06e+03`: a per-sample read in a dataset of the main process's loader)."""
    if per_step >= 100:
        return f"{per_step:.0f}"
    return f"{per_step:.2g}" if per_step < 1 else f"{per_step:.3g}"
