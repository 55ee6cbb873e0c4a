"""Per-op overhead of the model's part of the step against the machine's dispatch floor, in CPU
time so that machine load neither creates nor hides it (rules D202, D203, D111). Pure; no torch."""

from __future__ import annotations

from dataclasses import dataclass

from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import (
    clamp,
    measured_steps,
    median,
    on_cuda,
    training_loaders,
)
from torchdoctor.diagnose.rules._debug_modes import debugging_mode_on

# An op whose mean time is within this factor of a trivial op's dispatch cost does almost no
# arithmetic: the step is paying for dispatch, not for work (rules D202 and D203).
TRIVIAL_OP_RATIO = 10.0


@dataclass(frozen=True)
class OpOverhead:
    """Ops per step and how their mean time compares with the machine's per-op floor."""

    ops_per_step: float
    mean_op_s: float  # compute time per step / ops
    dispatch_s: float  # measured cost of one trivial op on this device

    @property
    def floor_s(self) -> float:
        """Lower bound of the fixed cost per step: every op pays at least the dispatch floor."""
        return self.ops_per_step * self.dispatch_s

    @property
    def trivial(self) -> bool:
        return self.mean_op_s <= TRIVIAL_OP_RATIO * self.dispatch_s


# Below this CPU share the measurement says little more than "the machine was overloaded".
MIN_CPU_SHARE = 0.05


def cpu_share(run: RunObservation) -> float:
    """Share of the measured steps' busy time the training thread had a CPU (1 when unknown).

    On a CPU run, ops preempted by other processes take longer in wall time while the dispatch
    floor (a short tight loop) does not: multiplying wall times by this share compares like with
    like, so the same script gets the same finding on a quiet and a busy machine. Waiting for
    worker processes' batches is idle by design, not load: that wait is left out of the elapsed
    time. On a GPU run the thread also waits for the device: the share is not applied there.
    """
    if on_cuda(run):
        return 1.0
    idle_data = any(ld.num_workers > 0 for ld in training_loaders(run))
    shares = []
    for s in measured_steps(run):
        if s.cpu_share is None:
            continue
        elapsed = s.wall_s + s.evaluation_s  # the probe's share spans evaluation too
        busy = elapsed - (s.phases.get("data", 0.0) if idle_data else 0.0)
        if busy > 0:
            shares.append(s.cpu_share * elapsed / busy)
    share = median(shares) if shares else run.compute.cpu_share
    return clamp(share, MIN_CPU_SHARE, 1.0) if share else 1.0


def op_overhead(run: RunObservation, compute_s: float) -> OpOverhead | None:
    """Per-op costs of the model's part of the step, when ops and the dispatch floor were measured.

    Ops dispatched while loading data in the training process (per-sample indexing, collate) are
    left out when counted apart, and so are those inside the evaluation spans cut out of the step
    (validation, RL acting forwards: the step's time leaves them out); when data ops are not, a
    run loading in the training process is not judged at all (its op count mixes data and model
    work). Unknown op counts (a compiled run) mean unknown, never zero. A run with anomaly
    detection or its own profiler on is not judged: the mode's cost per op (and anomaly mode's
    extra ops) would read as the program's overhead. `compute_s` is wall time: it is scaled by
    `cpu_share`.
    """
    if debugging_mode_on(run):
        return None  # the mode's own per-op cost is in every op (D211/D212 say so)
    ops = run.compute.ops_per_step
    if ops is None:
        counted = [s.ops for s in run.steps if s.ops is not None]
        ops = sum(counted) / len(counted) if counted else None
    dispatch_s = run.compute.dispatch_overhead_s
    if not ops or not dispatch_s or compute_s <= 0:
        return None
    data_ops = run.compute.data_ops_per_step
    if data_ops is not None:
        ops -= data_ops
    elif any(ld.num_workers == 0 for ld in training_loaders(run)):
        return None
    ops -= run.compute.evaluation_ops_per_step or 0.0  # cut out of the step's time too
    if ops <= 0:
        return None
    return OpOverhead(
        ops_per_step=ops, mean_op_s=compute_s * cpu_share(run) / ops, dispatch_s=dispatch_s
    )


def ops_from_inside_calls(run: RunObservation, expected: float) -> bool:
    """The program made fewer torch calls from Python per step than the model's size explains:
    its extra ops come from inside a few calls (an nn.GRU/LSTM/RNN on CPU runs every time step
    as several ATen ops in C++), not from a Python loop D203 could vectorise."""
    calls = run.compute.python_calls_per_step
    if calls is None:
        return False
    calls -= run.compute.evaluation_python_calls_per_step or 0.0  # not the step's calls
    return calls < expected
