"""D401: the training step forces host-device synchronizations.

## What it does
Lists the lines in the training step that make the host wait for the device (`.item()`,
`.cpu()`, `.numpy()`, `.tolist()`, `print(tensor)`, `if tensor:`, `torch.cuda.synchronize()`),
with how often each runs per step. On a CUDA device it counts reads of GPU tensors and is a
warning when the GPU measurably idles during the step; on a CPU, where such reads cost next to
nothing, it is information only (each read becomes a sync once the loop runs on a GPU).

## Why is this bad
CUDA work is queued asynchronously: the host normally runs ahead, launching the next kernels while
the GPU computes. A sync empties that queue: the host waits for the GPU to finish, then the GPU
waits while the host prepares and launches the next work. Once per step it costs the launch
latency of the next step; several times per step (per-batch metrics, logging every loss) it
serialises the whole loop.

Estimated saving (CUDA): the measured GPU idle time per step that is not explained by waiting for
data or copies, as a share of the step. On CPU: 0.

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
from torchdoctor.diagnose.rules._common import clamp, on_cuda, pct, secs, severity_for, step_profile

CODE = "D401"
TITLE = "Host-device synchronizations inside the training step"
MIN_SYNCS_PER_STEP = 1.0


def _gpu_idle_share(run: RunObservation) -> float | None:
    """Mean GPU idle time per step not spent waiting for data or copies, as a share of the step."""
    idle = [s for s in run.steps if s.gpu_idle_s is not None and s.wall_s > 0]
    if not idle:
        return None
    unexplained = [
        max(0.0, s.gpu_idle_s - s.phases.get("data", 0.0) - s.phases.get("h2d", 0.0)) for s in idle
    ]
    return clamp(sum(unexplained) / sum(s.wall_s for s in idle))


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    cuda = on_cuda(run)
    # On a CUDA run only reads of device tensors sync; reads of CPU tensors are free. On a CPU run
    # every read is reported (as information): each one becomes a sync when the loop moves to a GPU.
    sites = sorted(
        (s for s in run.sync_sites if not cuda or s.device != "cpu"), key=lambda s: -s.per_step
    )
    per_step = sum(s.per_step for s in sites)
    if profile is None or per_step < MIN_SYNCS_PER_STEP:
        return []
    evidence = [f"{per_step:g} host-device sync(s) per step:"] + [
        f"{s.location}: {s.kind} {s.per_step:g} per step" for s in sites[:5]
    ]
    if cuda:
        idle_share = _gpu_idle_share(run)
        saving = idle_share or 0.0
        severity = severity_for(saving) if idle_share is not None else "info"
        if idle_share is not None:
            evidence.append(
                f"The GPU was idle for {pct(idle_share)} of each step outside data loading and "
                f"copies (step: {secs(profile.step_s)})."
            )
    else:
        saving, severity = 0.0, "info"
        evidence.append(
            "On this CPU run these reads cost next to nothing; on a GPU each one is a sync that "
            "stalls the queue."
        )
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity,
            saving=saving,
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
                "sites": [
                    {"location": s.location, "kind": s.kind, "per_step": s.per_step} for s in sites
                ],
            },
        )
    ]
