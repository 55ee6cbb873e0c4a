"""Run baseline and variant trials, each in a fresh `python -m torchdoctor.trials.worker`.

Repeats are interleaved round by round (baseline, variant 1, ..., all together; the next round in
reverse order) so slow drifts of machine load hit every configuration alike. Every run gets the
same seed and the same step budget. With one repeat the baseline still runs twice: the
verdicts need its run-to-run spread and whether it reproduces its own losses.
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


def run_plan(plan: TrialPlan, progress: Callable[[str, int], None] | None = None) -> TrialRuns:
    runs = TrialRuns({name: [] for name in plan.configs})
    started = time.perf_counter()
    names = list(plan.configs)
    with tempfile.TemporaryDirectory(prefix="torchdoctor-trials-") as workdir:
        for round_index in range(plan.repeats):
            for name in round_order(names, round_index):
                if progress:
                    progress(name, round_index)
                runs.outcomes[name].append(run_one(plan, name, workdir))
        if plan.repeats == 1 and "baseline" in runs.outcomes:
            # a second baseline run: its run-to-run spread and whether it reproduces itself
            runs.outcomes["baseline"].append(run_one(plan, "baseline", workdir))
    runs.total_s = time.perf_counter() - started
    return runs


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join((text or "").rstrip().splitlines()[-lines:])
