"""Train without a torch profiler left running.

A `torch.profiler.profile` (or `torch.autograd.profiler.profile`) around the training loop records
every op, and with `record_shapes`, `profile_memory` or `with_stack` much more, on every step it
covers; left on in a real run it slows each step and grows memory. The fix hands the script a
profiler that records nothing: the same methods (`start`, `stop`, `step`, `key_averages`,
`export_chrome_trace`, ...) that do nothing, so the script runs unchanged. Its exported traces
and tables are empty. Only observation changes: the loss trajectory must not.
"""

from __future__ import annotations

import json

import torch

from torchdoctor.techniques import finding_codes_for_fix

NAME = "profiler_off"
SUMMARY = "no torch.profiler.profile around the training steps"
TOLERANCE = 1e-6
TOLERANCE_REASON = "a profiler only observes: the arithmetic is the same"
FINDING_CODES = finding_codes_for_fix(NAME)  # from the technique registry
# what the fix can shorten (`--try auto` skips it when these take little of the run)
SHORTENS = ("step",)
PERMANENT = "# remove the `with torch.profiler.profile(...)` around the training loop"


def applies_to(run) -> bool:
    """Chosen through rule D212's finding: the observation has no profiler field of its own."""
    return False


class _Nothing:
    """What the idle profiler's methods return: empty, callable, iterable, printable."""

    def __call__(self, *args, **kwargs) -> _Nothing:
        return self

    def __getattr__(self, name: str) -> _Nothing:
        return self

    def __iter__(self):
        return iter(())

    def __len__(self) -> int:
        return 0

    def __str__(self) -> str:
        return ""


class IdleProfiler:
    """Stands in for a profiler class: accepts its arguments, records nothing."""

    def __init__(self, *args, **kwargs) -> None:
        self.step_num = 0

    def __enter__(self) -> IdleProfiler:
        return self

    def __exit__(self, *exc) -> None:
        return None

    def step(self) -> None:
        self.step_num += 1

    def export_chrome_trace(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"traceEvents": []}, handle)

    def __getattr__(self, name: str) -> _Nothing:  # start, stop, key_averages, events, ...
        return _Nothing()


def apply(hooks) -> None:
    def idle(*args, **kwargs) -> IdleProfiler:
        hooks.mark_used(NAME)
        return IdleProfiler()

    hooks.set_attribute(torch.profiler, "profile", idle)
    hooks.set_attribute(torch.autograd.profiler, "profile", idle)
