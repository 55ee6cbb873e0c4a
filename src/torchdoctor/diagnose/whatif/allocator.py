"""The allocator state a copy's timed calls start from: as the program's calls did.

On a CPU, a tensor of a few hundred KiB or more gets its memory from the C allocator, which can
hand freed memory back to the system; the next allocation then page-faults it in again. Whether
the program's calls paid that depends on its allocation pattern and on the process's history: a
per-tensor AdamW step allocates temporaries as large as its parameters and faulted ~1500 pages a
step in the program (d210), none in the what-if's clone timed back to back after the run, which
then took 0.6x the program's step; an autograd-on evaluation forward frees its saved activations
at once and faulted 500-4000 pages per validation pass in the program, none under
inference_mode. The probes count the faults of the program's calls (OptimizerObservation.
step_page_faults, EvaluationObservation.with_grad_page_faults); where the program paid them, the
copy's call as run is also timed from memory handed back (glibc's malloc_trim before each such
call, untimed), and its time as run is the two timings mixed in the share of the faults the
program paid (in one process, a second diagnosis of d210 saw 172 faults a step, a third 25,
against 1536 for the clone's step from memory handed back: the allocator's thresholds rise).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from torchdoctor.diagnose.probes.base import thread_page_faults

# below this share of the faults a copy's call pays from memory handed back, the program's
# calls are timed as they come (a few faults: the allocator's first growth, not each call's)
MIN_SHARE = 0.1
HANDED_BACK = " from memory handed back"  # the variant name of the as-run call timed so


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim (None elsewhere)."""
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None


def memory_handed_back() -> None:
    """The heap's free memory handed back to the system: the next allocations fault it in."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@dataclass(frozen=True)
class FaultShare:
    """How much of the page faults of a call from memory handed back the program's calls paid."""

    share: float  # 0..1
    program_faults: float  # per call of the program's
    copy_faults: int  # per call of the copy's, from memory handed back

    def started_from(self, calls: str) -> str:
        """WhatIfTiming.started_from for the as-run time mixed in this share."""
        return (
            f"as run {self.share:.0%} from memory handed back to the system, as the program's "
            f"{calls} page-faulted {self.program_faults:.0f} times each "
            f"({self.copy_faults} the copy's from memory handed back)"
        )


def fault_share(
    work: Callable[[], object], device_type: str, program_faults: float | None
) -> FaultShare | None:
    """The share of the faults of one call of `work` (a copy of the program's call) from memory
    handed back that the program's calls paid, `program_faults` each; None (time the calls as
    they come) on other devices, without malloc_trim or a fault count, or where the program's
    calls faulted less than MIN_SHARE of that. Runs `work` once."""
    if device_type != "cpu" or not program_faults or _malloc_trim() is None:
        return None
    memory_handed_back()
    before = thread_page_faults()
    work()
    after = thread_page_faults()
    if before is None or after is None or after <= before:
        return None
    share = min(1.0, program_faults / (after - before))
    return FaultShare(share, program_faults, after - before) if share >= MIN_SHARE else None


def with_handed_back(
    variants: dict[str, Callable[[], object]], name: str, faults: FaultShare | None
) -> tuple[dict[str, Callable[[], object]], dict[str, Callable[[], object]]]:
    """`variants` and the `prepare` of interleaved_samples: with `faults`, `name` also timed
    from memory handed back (as `name + HANDED_BACK`)."""
    if faults is None:
        return variants, {}
    handed_back = name + HANDED_BACK
    return {**variants, handed_back: variants[name]}, {handed_back: memory_handed_back}


def mixed(
    samples: dict[str, list[float]], name: str, faults: FaultShare | None
) -> dict[str, list[float]]:
    """`samples` with `name`'s times, round by round, mixed with its times from memory handed
    back in the share of the faults the program paid (the handed-back variant removed)."""
    if faults is None:
        return samples
    handed_back = samples.pop(name + HANDED_BACK)
    samples[name] = [
        plain + faults.share * (back - plain)
        for plain, back in zip(samples[name], handed_back, strict=True)
    ]
    return samples
