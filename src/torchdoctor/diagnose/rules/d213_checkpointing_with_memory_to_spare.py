"""D213: activation checkpointing on a model whose memory fits with room to spare.

## What it does
Flags runs that use activation checkpointing (`torch.utils.checkpoint`) while the run's peak
memory stayed under half of the device's capacity (process memory against RAM on a CPU), when the
recompute, measured as the time the checkpointed functions took when re-run inside backward, is
3% or more of the step.

## Why is this bad
Checkpointing trades compute for memory: the checkpointed segments' activations are dropped after
the forward and recomputed during backward, about one extra forward of those segments per step.
That trade only pays when memory is short; with memory to spare it is time lost in every step
(or the spare memory could hold a larger batch instead).

Estimated saving: the measured recompute time. The memory it costs back is not measured: the
segments' activations (check the new peak with another diagnosis after the change).

## Example
```python
def forward(self, x):
    for block in self.blocks:
        x = checkpoint(block, x, use_reentrant=False)
    return self.head(x)
```

## Use instead
```python
def forward(self, x):
    for block in self.blocks:
        x = block(x)
    return self.head(x)
```

When the checkpoint calls come from an installed package (Hugging Face transformers' layers
after `model.gradient_checkpointing_enable()` or `gradient_checkpointing=True` in
`TrainingArguments`, which TRL's configs set by default), the fix is that option, not a line of
the program's model.

## Fix safety
Safe: the same result; the peak memory grows by the checkpointed segments' activations.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import clamp, gib, pct, secs, severity_for, step_profile

CODE = "D213"
TITLE = "Activation checkpointing recomputes forwards although memory is plentiful"
MAX_PEAK_SHARE = 0.5  # of the capacity
MIN_SHARE = 0.03  # recompute, of the step


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    recompute = run.habits.checkpoint_recompute_s_per_step
    memory = run.memory
    if profile is None or not recompute or not memory.peak_bytes or not memory.capacity_bytes:
        return []
    peak_share = memory.peak_bytes / memory.capacity_bytes
    share = clamp(recompute / profile.step_s)
    if peak_share > MAX_PEAK_SHARE or share < MIN_SHARE:
        return []
    where = "device" if memory.source == "cuda_allocator" else "machine (process memory)"
    packages = run.habits.checkpoint_caller_packages
    through = (
        [f"The checkpoint calls come from inside {', '.join(packages)}: an option of theirs "
         "switched checkpointing on, not the program's own code."]
        if packages
        else []
    )  # fmt: skip
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(share),
            saving=share,
            evidence=[
                f"Recomputing the checkpointed segments inside backward took {secs(recompute)} "
                f"per step, {pct(share)} of the step ({secs(profile.step_s)}).",
                f"Peak memory {gib(memory.peak_bytes)} of the {where}'s "
                f"{gib(memory.capacity_bytes)} ({pct(peak_share)}): "
                f"{gib(memory.capacity_bytes - memory.peak_bytes)} to spare.",
                *through,
            ],
            fix=_fix(run.habits.checkpoint_caller_packages),
            source="torch.utils.checkpoint docs; PyTorch performance tuning guide",
            explanation="Checkpointing buys memory with an extra forward of each segment; "
            "this run has the memory, so it only pays the time.",
            details={"recompute_s": recompute, "peak_share": peak_share},
            saving_basis="measured",
            saving_how="the recompute's measured time inside backward (the memory it would "
            "take back is not measured)",
        )
    ]


def _fix(packages: list[str]) -> str:
    """Where checkpointing was switched on: the program's own call, or a package's option."""
    if "transformers" in packages:
        return (
            "gradient_checkpointing=False  # in TrainingArguments / a TRL config (TRL's default "
            "is True)\n# or drop model.gradient_checkpointing_enable()"
        )
    if packages:
        return f"# switch off {packages[0]}'s activation-checkpointing option (it calls checkpoint)"
    return "x = block(x)  # instead of checkpoint(block, x)"
