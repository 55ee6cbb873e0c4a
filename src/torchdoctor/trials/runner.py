"""Run baseline and variant trials, each in a fresh `python -m torchdoctor.trials.worker`.

Repeats are interleaved round by round (baseline, variant 1, ..., all together; the next round in
reverse order) so slow drifts of machine load hit every configuration alike. Every run gets the
same seed and the same step budget. With one repeat the baseline still runs twice: the
verdicts need its run-to-run spread and whether it reproduces its own losses.

Where the planned rounds disagree (`unsettled`, trials.analysis), further rounds of the baseline
and the configurations still unsettled run, up to `max_repeats`: a gain measured 1.3x in one
round and 2.0x in the next cannot say whether a stated saving is within 1.5x of it. A
configuration left out of a further round stays out of the later ones, so every configuration's
runs pair with the baseline's round by round (run i of each was in round i).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from torchdoctor.program import Program


@dataclass
class TrialPlan:
    program: Program
    configs: dict[str, list[str]]  # config name -> fixes ("baseline" -> [])
    steps: int  # steps recorded per run, warm-up included
    repeats: int
    seed: int = 0
    observation_path: str | None = None  # baseline RunObservation (JSON) for the fixes to read
    timeout_s: float = 600.0
    max_repeats: int = 0  # further rounds while some configuration is unsettled, up to this


@dataclass
class RunOutcome:
    config: str
    result: dict | None  # the worker's JSON, None if it produced none
    returncode: int
    stderr_tail: str
    seconds: float


@dataclass
class TrialRuns:
    outcomes: dict[str, list[RunOutcome]] = field(default_factory=dict)
    total_s: float = 0.0


def round_order(names: list[str], round_index: int) -> list[str]:
    return names if round_index % 2 == 0 else list(reversed(names))


def worker_command(plan: TrialPlan, fixes: list[str], out: str) -> list[str]:
    command = [sys.executable, "-m", "torchdoctor.trials.worker", "--out", out]
    command += ["--steps", str(plan.steps), "--seed", str(plan.seed), "--fixes", ",".join(fixes)]
    if plan.observation_path:
        command += ["--observation", plan.observation_path]
    if plan.program.module:
        command.append("--module")
    return command + [plan.program.target, *plan.program.argv]


def run_one(plan: TrialPlan, name: str, workdir: str) -> RunOutcome:
    out = os.path.join(workdir, f"{name}-{time.monotonic_ns()}.json")
    env = {**os.environ, "PYTHONHASHSEED": str(plan.seed)}
    started = time.perf_counter()
    try:
        completed = subprocess.run(
            worker_command(plan, plan.configs[name], out),
            stdout=subprocess.DEVNULL,  # the script's own prints
            # never the terminal: a program that reads stdin (input(), sys.stdin) would wait,
            # unseen, for an answer in every trial until its timeout; it reads end-of-file
            stdin=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=plan.program.cwd,
            timeout=plan.timeout_s,
        )
        returncode, stderr = completed.returncode, completed.stderr
    except subprocess.TimeoutExpired as exc:
        returncode = -1
        stderr = f"{exc.stderr or ''}\ntrial stopped after {plan.timeout_s:.0f} s"
    seconds = time.perf_counter() - started
    result = json.loads(Path(out).read_text()) if os.path.exists(out) else None
    return RunOutcome(name, result, returncode, _tail(stderr), seconds)


def run_order(plan: TrialPlan) -> list[str]:
    """Every run of the plan in order: configurations interleaved round by round, and with one
    repeat a second baseline run (its run-to-run spread and whether it reproduces itself)."""
    names = list(plan.configs)
    order = [name for index in range(plan.repeats) for name in round_order(names, index)]
    if plan.repeats == 1 and "baseline" in plan.configs:
        order.append("baseline")
    return order


def run_plan(
    plan: TrialPlan,
    progress: Callable[[str, int, int], None] | None = None,
    unsettled: Callable[[TrialRuns], list[str]] | None = None,
) -> TrialRuns:
    """`progress(config, runs_done, runs_total)` before each run (and once all are done);
    `unsettled(runs)`: the configurations whose rounds still disagree (see the module doc)."""
    runs = TrialRuns({name: [] for name in plan.configs})
    started = time.perf_counter()
    order = run_order(plan)
    done = 0
    with tempfile.TemporaryDirectory(prefix="torchdoctor-trials-") as workdir:

        def run_all(names: list[str], total: int) -> None:
            nonlocal done
            for name in names:
                if progress:
                    progress(name, done, total)
                runs.outcomes[name].append(run_one(plan, name, workdir))
                done += 1

        run_all(order, len(order))
        rounds, pending = plan.repeats, list(plan.configs)
        while unsettled is not None and rounds < plan.max_repeats:
            pending = [name for name in unsettled(runs) if name in pending]
            if not pending:
                break
            names = round_order(["baseline", *pending], rounds)
            run_all(names, done + len(names))
            rounds += 1
    if progress:
        progress("", done, done)
    runs.total_s = time.perf_counter() - started
    return runs


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join((text or "").rstrip().splitlines()[-lines:])
