"""What keeps a what-if probe honest and harmless: the program's RNG streams are put back after
it, its time is bounded by a budget, and its timings are interleaved medians.

The budget is a hard limit for the interleaved timings: while `Budget.active()` holds, a timing
whose warm-up shows that MIN_ROUNDS rounds would not fit in what is left of the whole budget
raises `OverBudget` instead of running them (a probe must not start work it cannot finish), and
a timing stops after MIN_ROUNDS rounds once its rounds agree within SETTLED_RATIO (or their
gains within SETTLED_GAIN), leaving the rest of its allowance to the probes after it.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import torch

from torchdoctor.diagnose.observations import WhatIfTiming


@contextmanager
def program_state_kept() -> Iterator[None]:
    """Put back every random stream the program can read (torch CPU and CUDA, Python's random,
    NumPy's global one) and the grad mode: a side DataLoader seeds its workers from torch's
    generator, dropout in a copied model draws from it."""
    cpu = torch.get_rng_state()
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None
    python = random.getstate()
    numpy = sys.modules.get("numpy")
    numpy_state = numpy.random.get_state() if numpy is not None else None
    grad = torch.is_grad_enabled()
    global_hooks = _program_global_hooks_off()
    try:
        yield
    finally:
        _put_back(global_hooks)
        torch.set_grad_enabled(grad)
        torch.set_rng_state(cpu)
        if cuda is not None:
            torch.cuda.set_rng_state_all(cuda)
        random.setstate(python)
        if numpy is not None and numpy_state is not None:
            numpy.random.set_state(numpy_state)


_GLOBAL_MODULE_HOOKS = (
    "_global_forward_pre_hooks",
    "_global_forward_hooks",
    "_global_backward_pre_hooks",
    "_global_backward_hooks",
)


def _program_global_hooks_off() -> dict[str, dict]:
    """The program's hooks on every module's call (`register_module_forward_hook`) are taken
    off while the copies run: they would run (log, write files) for calls that are not the
    program's. Returns them, to be put back."""
    hooks_module = torch.nn.modules.module
    saved = {}
    for name in _GLOBAL_MODULE_HOOKS:
        hooks = getattr(hooks_module, name, None)
        if hooks:
            saved[name] = dict(hooks)
            hooks.clear()
    return saved


def _put_back(saved: dict[str, dict]) -> None:
    for name, hooks in saved.items():
        getattr(torch.nn.modules.module, name).update(hooks)


MIN_ROUNDS = 3  # interleaved rounds a timing needs: a median of fewer is one noisy sample
MAX_ROUNDS = 15
# Rounds agree when each alternative's time over the as-run time varies by at most this factor
# (largest ratio / smallest - 1) across them: more rounds would move the median ratio by less
# than the 1.5x a stated saving is held to, so the probe stops and leaves its time to others.
SETTLED_RATIO = 0.10
# ... or when each alternative's gain (1 - its ratio) varies by at most this factor across them,
# the 1.5x a stated saving is held to (the median is then within it of every round): a fused step
# at 0.25x-0.45x the loop's time gains 55%-75% in every round, yet its ratios differ by 80%: such
# a probe ran every round its allowance held (10-15 in the demo's diagnosis at load 12, 1.4 s of
# a 3 s budget) and left the workers probe, the next finding's, short.
SETTLED_GAIN = 0.50


class OverBudget(Exception):
    """The rounds a timing needs do not fit in what is left of the what-if budget."""


class Budget:
    """Wall-time allowance of all what-if probes together."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.perf_counter) -> None:
        self.seconds = seconds
        self.clock = clock
        self.start = clock()

    @property
    def spent(self) -> float:
        return self.clock() - self.start

    @property
    def left(self) -> float:
        return max(0.0, self.seconds - self.spent)

    @contextmanager
    def active(self) -> Iterator[Budget]:
        """The timings started meanwhile refuse rounds that would overrun this budget."""
        token = _ACTIVE.set(self)
        try:
            yield self
        finally:
            _ACTIVE.reset(token)


_ACTIVE: ContextVar[Budget | None] = ContextVar("torchdoctor_whatif_budget", default=None)


def synchronize(device_type: str) -> None:
    if device_type == "cuda":
        torch.cuda.synchronize()


def timed(
    work: Callable[[], object], device_type: str, clock: Callable[[], float] = time.perf_counter
) -> float:
    synchronize(device_type)
    start = clock()
    work()
    synchronize(device_type)
    return clock() - start


def compute_clock(device_type: str) -> Callable[[], float]:
    """The clock for timing compute that runs in this thread alone: on a CPU with one intra-op
    thread, the process's CPU time (what another process's load preempts is not the fix's
    doing); else wall time (a GPU, or several threads whose parallel speed-up is the point)."""
    if device_type == "cpu" and torch.get_num_threads() == 1:
        return time.process_time
    return time.perf_counter


def clock_name(clock: Callable[[], float]) -> str:
    """WhatIfTiming.clock for a timing taken on `clock`."""
    return "cpu" if clock is time.process_time else "wall"


def interleaved_medians(
    variants: dict[str, Callable[[], object]],
    device_type: str,
    allowance_s: float,
    clock: Callable[[], float] | None = None,
    prepare: dict[str, Callable[[], object]] | None = None,
    work_scale: dict[str, float] | None = None,
) -> tuple[dict[str, float], int]:
    """Median seconds per call of each variant (`interleaved_samples`) and the rounds timed."""
    samples, done = interleaved_samples(
        variants, device_type, allowance_s, clock, prepare, work_scale
    )
    return {name: statistics.median(values) for name, values in samples.items()}, done


def paired_ratio(samples: dict[str, list[float]], name: str, reference: str) -> float:
    """The median over the rounds of `name`'s time over `reference`'s in the same round: a load
    change between rounds moves both sides of a round alike, not their ratio."""
    return statistics.median(
        v / r for v, r in zip(samples[name], samples[reference], strict=True) if r > 0
    )


def interleaved_samples(
    variants: dict[str, Callable[[], object]],
    device_type: str,
    allowance_s: float,
    clock: Callable[[], float] | None = None,
    prepare: dict[str, Callable[[], object]] | None = None,
    work_scale: dict[str, float] | None = None,
) -> tuple[dict[str, list[float]], int]:
    """Seconds per call of each variant, timed in interleaved rounds (a load change on
    the machine hits every variant alike) until `allowance_s` is spent (MIN_ROUNDS..MAX_ROUNDS,
    fewer once the rounds agree: `settled`), after one untimed warm-up call each. `clock` times
    the rounds; by default `compute_clock`: CPU time where that is the fairer measure (another
    process's load preempts this one during a round; the fix's gain is not in that). Returns each
    variant's times, round by round, and the rounds timed. Raises OverBudget (after the
    warm-up) when MIN_ROUNDS rounds would not fit in what is left of the active budget.
    `prepare[name]`, untimed, runs before every call of variant `name` (the allocator's state
    the program's calls began in: whatif/allocator.py). `work_scale[name]`: how many times the
    first variant's work `name` does (a 4x batch: 4); its warm-up must fit at that many times the
    first's, not only at the longest so far (x4 after x2 took twice the time predicted: the
    batch probe ran 0.8 s of a 0.6 s budget on d103 at load 17)."""
    before = prepare or {}
    scale = work_scale or {}
    # warm-up, on the wall clock: the allowance is wall time
    first: dict[str, float] = {}
    for name, work in variants.items():
        if first:  # the next warm-up must fit, at the longest one so far (a fix's 4x batch...)
            predicted = max(max(first.values()), next(iter(first.values())) * scale.get(name, 1))
            require(predicted, f"the warm-up of {name!r}")
        if name in before:
            before[name]()
        first[name] = timed(work, device_type)
    per_round = max(sum(first.values()), 1e-6)
    rounds = int(max(MIN_ROUNDS, min(MAX_ROUNDS, allowance_s / per_round)))
    rounds = min(rounds, affordable_rounds(per_round))
    clock = clock or compute_clock(device_type)
    samples: dict[str, list[float]] = {name: [] for name in variants}
    started = time.perf_counter()
    longest = 0.0  # the longest round so far, on the wall clock: what the next one may cost
    for done in range(1, rounds + 1):
        if done > 1 and not _round_fits(done, longest):
            done -= 1
            break
        begun = time.perf_counter()
        for name, work in variants.items():
            if name in before:
                before[name]()
            samples[name].append(timed(work, device_type, clock))
        longest = max(longest, time.perf_counter() - begun)
        if done >= MIN_ROUNDS and (settled(samples) or _spent(started, allowance_s)):
            break
    return samples, done


def _round_fits(round_number: int, longest_s: float) -> bool:
    """Before round `round_number` (after the first): does one more, at the longest round so far,
    fit in the active budget? The warm-up sized the rounds; under load they took 2-4x that (a
    0.33 s allowance took 0.7 s at load 25). False once the fewest are done (stop there); raises
    OverBudget before one of the fewest (too few to keep)."""
    left = budget_left()
    if left is None or longest_s <= left:
        return True
    if round_number > MIN_ROUNDS:
        return False
    raise OverBudget(
        f"the budget ran out after {round_number - 1} of the {MIN_ROUNDS} fewest rounds "
        f"(a round took {longest_s:.2f} s, {left:.2f} s left: the machine's load stretched them)"
    )


def _spent(started: float, allowance_s: float) -> bool:
    """Rounds begun at `started` used up their allowance or the active budget in wall time: a
    machine under load stretches the rounds the warm-up sized (a 0.64 s allowance took 1.4 s at
    load 12), and no round after the fewest may start then."""
    left = budget_left()
    return time.perf_counter() - started >= allowance_s or (left is not None and left <= 0)


def budget_left() -> float | None:
    """Seconds left in the active what-if budget (None: no budget is active)."""
    budget = _ACTIVE.get()
    return None if budget is None else budget.left


def affordable_rounds(per_round: float, fewest: int = MIN_ROUNDS) -> int:
    """How many rounds of `per_round` seconds fit in what is left of the active budget (a large
    number without one); raises OverBudget when not even `fewest` do."""
    left = budget_left()
    if left is None:
        return MAX_ROUNDS * 1000
    affordable = int(left / per_round)
    if affordable < fewest:
        raise OverBudget(
            f"{fewest} rounds of {per_round:.2f} s would not fit in the {left:.2f} s left"
        )
    return affordable


def require(predicted_s: float, what: str) -> None:
    """Raise OverBudget when `what`, work that cannot be stopped once begun (a model's deep
    copy, a worker set's start), is predicted from what was already observed to take more than
    is left of the active budget: it is not begun."""
    left = budget_left()
    if left is not None and (predicted_s > left or left <= 0):
        raise OverBudget(f"{what} would take about {predicted_s:.2f} s, {left:.2f} s left")


def settled(samples: dict[str, list[float]]) -> bool:
    """Do the rounds agree? Each variant's time over the first variant's (the as-run work), round
    by round, varies by at most SETTLED_RATIO, or its gain (1 - that ratio, positive in every
    round) by at most SETTLED_GAIN: the saving a rule states from it would not move by more."""
    reference, *others = samples.values()
    for values in others:
        ratios = [v / r for v, r in zip(values, reference) if r > 0]
        if not ratios or min(ratios) <= 0:
            return False
        if max(ratios) <= min(ratios) * (1 + SETTLED_RATIO):
            continue
        gains = [1 - ratio for ratio in ratios]
        if min(gains) <= 0 or max(gains) > min(gains) * (1 + SETTLED_GAIN):
            return False
    return True


def compare(
    name: str,
    unit: str,
    setting: str,
    variants: tuple[Callable[[], object], Callable[[], object]],
    device_type: str,
    allowance_s: float,
    clock: Callable[[], float] | None = None,
) -> WhatIfTiming:
    """One timing of `name`: the work as run vs with the fix (`variants`), interleaved."""
    as_run, fix = variants
    clock = clock or compute_clock(device_type)
    medians, rounds = interleaved_medians(
        {"as run": as_run, "fix": fix}, device_type, allowance_s, clock
    )
    return WhatIfTiming(
        name=name,
        unit=unit,
        as_run_s=medians["as run"],
        alternative_s=medians["fix"],
        repeats=rounds,
        setting=setting,
        clock=clock_name(clock),
    )
