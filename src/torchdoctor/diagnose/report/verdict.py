"""Why the report says what it says, as data: the builder chooses, report/prose.py words it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

BoundKind = Literal["data", "h2d", "other", "compute"]
NoStepsWhy = Literal[
    "warmup_only",
    "crashed",
    "interrupted",
    "no_training_step",
    "no_training_loop",
    "budget_in_evaluation",
]


@dataclass(frozen=True)
class Bound:
    """The largest of data loading, host-to-device copies, compute and other in the breakdown."""

    kind: BoundKind
    share: float
    dominant_phase: str  # `kind`, or for compute the largest of forward, backward, optimizer
    compute_shares: dict[str, float] = field(default_factory=dict)  # forward, backward, optimizer
    model_seen: bool = True  # an nn.Module call was seen (else the model's time is in "other")


@dataclass(frozen=True)
class NoSteps:
    """No step was measured, and why."""

    why: NoStepsWhy
    steps_run: int = 0  # warm-up steps that ran
    status: str = "completed"  # the run's status (warmup_only: why it ended)
    error: str | None = None
    backwards: int = 0  # backward() calls seen (no_training_step / no_training_loop)
    forwards: int = 0  # root model forwards seen
    # processes started through multiprocessing (training may have run there, unseen)
    children: int = 0
    child_targets: tuple[str, ...] = ()


@dataclass(frozen=True)
class TopFix:
    finding_id: str
    title: str
    saving: float  # share of the run's wall time
    basis: str = "estimated"  # Finding.saving_basis


@dataclass(frozen=True)
class TopLine:
    """The program's own line that took most of the dominant phase (the line profile)."""

    location: str  # "train.py:42"
    code: str
    share: float  # of step time


@dataclass(frozen=True)
class Unexplained:
    """The dominant part of the step, which the findings do not account for."""

    kind: BoundKind
    share: float  # of step time
    # share of step time the findings acting on it account for (0: none): their savings, shares
    # of the run, divided by the training steps' share of the run
    explained: float


@dataclass(frozen=True)
class Verdict:
    bound: Bound | None = None  # None when no step was measured (then `no_steps` says why)
    no_steps: NoSteps | None = None
    evaluation_share: float | None = None  # set when evaluation dominates the measured time
    # that evaluation is an RL loop's acting (step_analysis.evaluation_is_acting): the policy's
    # forwards that pick actions, part of its training
    evaluation_is_acting: bool = False
    top_fix: TopFix | None = None
    unexplained: Unexplained | None = None  # no rule explains most of the dominant part
    top_line: TopLine | None = None  # named when no finding saves much
    ended: str | None = None  # "crashed" / "interrupted" after some measured steps
    measured_steps: int = 0
