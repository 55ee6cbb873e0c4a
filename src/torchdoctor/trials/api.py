"""`run_trials`: measure what each fix gains on the user's script, and whether it keeps results.

    from torchdoctor.trials.api import run_trials
    from torchdoctor.trials.render import render_terminal, render_json
    report = run_trials("train.py", [], "workers,float32", steps=10, repeats=3)
    report = run_trials(Program("pkg.train", module=True), (), "all", steps=10)

The diagnose CLI wires it as `torchdoctor diagnose SCRIPT --try FIX[,FIX...]`.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence

import torch

from torchdoctor.errors import TorchdoctorError, UsageError
from torchdoctor.intercept.hooks import Hooks
from torchdoctor.program import Program, as_program
from torchdoctor.trials import analysis, stats
from torchdoctor.trials.cycle import trial_window
from torchdoctor.trials.fixes import (
    SUGGESTIONS,
    all_fixes,
    fixes_for_findings,
    get_fix,
    parse_fix_names,
)
from torchdoctor.trials.permanent import permanent_change
from torchdoctor.trials.report import Spread, Suggestion, TrialReport
from torchdoctor.trials.runner import TrialPlan, run_plan


class NothingToTry(TorchdoctorError):
    """No fix was left to run (none recommended, or none can act on this machine)."""


def preflight(names: list[str], device_type: str) -> tuple[list[str], dict[str, str]]:
    """Register each fix on a throwaway hook set: a fix that cannot act here (e.g. pin_memory on
    a CPU-only machine) is set aside with its reason instead of costing trial runs."""
    runnable, refused = [], {}
    for name in names:
        try:
            get_fix(name).apply(Hooks(device_type=device_type))
            runnable.append(name)
        except RuntimeError as exc:
            refused[name] = str(exc)
    return runnable, refused


def _diagnose(program: Program, steps: int):
    from torchdoctor.diagnose.api import diagnose_script

    return diagnose_script(program, steps=steps, quiet=True)


def _suggestions(names: list[str], diagnosis, tried: list[str]) -> list[Suggestion]:
    """The suggestions asked for, and the findings whose change of what is learned is not
    among the fixes `tried` (a fix that answers one runs only when named)."""
    found = [Suggestion(name, SUGGESTIONS[name]) for name in names]
    for finding in getattr(diagnosis, "findings", []) or []:
        if finding.changes_semantics:
            named = [f.NAME for f in all_fixes() if finding.id in f.FINDING_CODES]
            if named and set(named) <= set(tried):
                continue  # measured in this report
            reason = f"{finding.title}: changes what the model learns, so it is never applied"
            if named:
                reason += f" unless named: --try {','.join(named)}"
            found.append(Suggestion(finding.id, reason))
    return found


def run_trials(
    target: Program | str,
    args: Sequence[str],
    fixes: str | list[str],
    steps: int = 10,
    repeats: int = 3,
    module: bool = False,
    *,
    warmup: int = 2,
    seed: int = 0,
    diagnosis=None,
    timeout_s: float = 600.0,
    progress: Callable[[str, int, int], None] | None = None,
    min_window_s: float = 0.0,
    max_repeats: int | None = None,
    wants_more: Callable[[str, Spread], bool] | None = None,
) -> TrialReport:
    """Run baseline and variants (each fix alone, then all together) `repeats` times each.
    `target`: a Program, or a script path (a module name with `module=True`) and its `args`.
    With a diagnosis, `steps` is rounded up to whole cycles of the program's loop (trials.cycle)
    so that evaluation and epoch boundaries count as in the diagnosis's savings, and stretched to
    last at least `min_window_s` per run. `max_repeats`: where the rounds of a configuration
    disagree (analysis.unsettled), further rounds up to this many (from `repeats` >= 3 only:
    fewer rounds give no verdict to settle); `wants_more(config, paired speedups)`: further rounds
    of a configuration whose rounds agree but cannot yet decide what the caller asks of them."""
    if steps < 1 or repeats < 1 or warmup < 0:
        raise UsageError("--steps and --repeats must be at least 1")
    program = as_program(target, args, module)
    spec = fixes if isinstance(fixes, str) else ",".join(fixes)
    names, suggested, wants_all = parse_fix_names(spec)
    skipped: dict[str, str] = {}
    if wants_all:
        diagnosis = diagnosis or _diagnose(program, steps)
        names = list(dict.fromkeys(names + fixes_for_findings(diagnosis.findings, diagnosis.run)))
        if "auto" in (part.strip() for part in spec.split(",")):
            from torchdoctor.trials.auto import worth_trying

            names, skipped = worth_trying(names, diagnosis)
    device_type = "cuda" if torch.cuda.is_available() else "cpu"
    window = trial_window(steps, getattr(diagnosis, "run", None), min_window_s)
    runnable, not_applicable = preflight(names, device_type)
    not_applicable |= skipped
    configs: dict[str, list[str]] = {"baseline": []} | {name: [name] for name in runnable}
    if len(runnable) > 1:
        configs["all"] = runnable
    with tempfile.TemporaryDirectory(prefix="torchdoctor-obs-") as tmp:
        observation_path = None
        if diagnosis is not None:
            from torchdoctor.trials.observation_io import dump_run_observation

            observation_path = os.path.join(tmp, "run.json")
            dump_run_observation(diagnosis.run, observation_path)
        more = (max_repeats or 0) if repeats >= analysis.MIN_ROUNDS else 0
        plan = TrialPlan(
            program,
            configs,
            warmup + window.steps,
            repeats,
            seed,
            observation_path,
            timeout_s,
            max(more, repeats),
        )

        def unsettled(runs) -> list[str]:
            return analysis.unsettled(configs, runs.outcomes, warmup, device_type, wants_more)

        runs = run_plan(plan, progress, unsettled) if runnable else None
    return _build_report(
        plan,
        runs,
        warmup,
        device_type,
        not_applicable,
        _suggestions(suggested, diagnosis, runnable),
        diagnosis,
        window,
    )


def _build_report(
    plan, runs, warmup, device_type, not_applicable, suggestions, diagnosis=None, window=None
) -> TrialReport:
    if runs is None:
        reasons = "; ".join(f"{k}: {v}" for k, v in not_applicable.items())
        raise NothingToTry(
            f"no fix can be tried on this machine ({reasons})"
            if reasons
            else "the diagnosis recommends no fix that can be applied at run time"
        )
    outcomes = runs.outcomes
    baseline = analysis.summarize("baseline", [], outcomes["baseline"], warmup)
    if baseline.status == "crashed":
        raise TorchdoctorError(f"the script failed without any fix: {baseline.error}")
    if not baseline.runs:
        raise TorchdoctorError(
            f"the script ran fewer than {warmup + 1} training steps; nothing to measure"
        )
    base_runs = [o.result for o in outcomes["baseline"] if o.result is not None]
    spread = stats.run_to_run_spread(base_runs, warmup)
    noise = analysis.Noise(
        spread,
        stats.run_to_run_spread(base_runs, warmup, "cpu_s"),
        device_type,
        getattr(diagnosis, "breakdown", None),
    )
    variants = [
        analysis.compare(
            baseline,
            outcomes["baseline"],
            analysis.summarize(name, fixes, outcomes[name], warmup),
            outcomes[name],
            warmup,
            noise,
        )
        for name, fixes in plan.configs.items()
        if name != "baseline"
    ]
    analysis.check_combination(variants)
    kept = [v.config.name for v in variants if v.verdict == "faster" and v.config.name != "all"]
    change, kind = permanent_change(plan.program, kept)
    return TrialReport(
        target=plan.program.target,
        argv=list(plan.program.argv),
        steps=plan.steps - warmup,
        warmup=warmup,
        repeats=plan.repeats,
        seed=plan.seed,
        device_type=device_type,
        baseline=baseline,
        variants=variants,
        suggestions=suggestions,
        not_applicable=not_applicable,
        permanent_change=change,
        permanent_change_kind=kind,
        total_s=runs.total_s,
        baseline_spread=spread,
        cycle_steps=window.cycle_steps if window else None,
        window=window.note if window else "",
    )
