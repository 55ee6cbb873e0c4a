"""Renderers for a TrialReport: a terminal table and JSON (formatting only, no computation)."""

from __future__ import annotations

import json

from rich.table import Table

from torchdoctor.trials.analysis import MIN_ROUNDS
from torchdoctor.trials.report import ConfigResult, Spread, TrialReport, VariantResult
from torchdoctor.trials.semantics import OPTIMISATION_CHANGED, RANDOM_DRAWS_DIFFER


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.1f} ms"


def _ratio(spread: Spread | None) -> str:
    if spread is None or spread.median is None:
        return "-"
    return f"{spread.median:.2f}x ({spread.low:.2f}-{spread.high:.2f})"


def _memory(change: float | None) -> str:
    return "-" if change is None else f"{change * 100:+.0f}%"


def _semantics(variant: VariantResult) -> str:
    s = variant.semantics
    if s is None:
        return "-"
    if s.max_deviation is None:
        return s.verdict
    if s.verdict == "kept" and s.max_deviation == 0:
        return "kept (identical)"
    if s.verdict == RANDOM_DRAWS_DIFFER:
        return "kept (random draws differ)"
    if s.verdict == OPTIMISATION_CHANGED:
        return f"{s.verdict} (loss at equal samples: max {s.max_deviation:.1e})"
    return f"{s.verdict} (max {s.max_deviation:.1e}, tol {s.tolerance:.0e})"


def _rounds(report: TrialReport) -> str:
    """ "3 repeats", or "3 repeats (up to 6 where a fix's rounds disagreed)" when the baseline
    ran further rounds beside an unsettled fix (trials.runner)."""
    extra = report.baseline.runs > report.repeats > 1
    more = f" (up to {report.baseline.runs} where a fix's rounds disagreed)" if extra else ""
    return f"{report.repeats} repeats{more}"


def trials_table(report: TrialReport) -> Table:
    table = Table(
        title=f"--try on {report.target}: {report.steps} steps x {_rounds(report)}",
        caption=report.window or None,
    )
    for column in (
        "config",
        "step time",
        "speedup",
        "cpu speedup",
        "samples/s",
        "memory",
        "semantics",
        "verdict",
    ):
        table.add_column(column)
    base = report.baseline
    table.add_row(
        "baseline",
        _ms(base.step_s.median),
        "1.00x",
        "1.00x",
        _samples(base.samples_per_s),
        "",
        "reference",
        "",
    )
    for variant in report.variants:
        c = variant.config
        table.add_row(
            c.name,
            _ms(c.step_s.median),
            _ratio(variant.speedup) + (" per sample" if variant.per_sample else ""),
            _ratio(variant.cpu_speedup) + (" per sample" if variant.per_sample else ""),
            _samples(c.samples_per_s),
            _memory(variant.memory_change),
            _semantics(variant),
            variant.verdict,
        )
    return table


def _samples(spread: Spread) -> str:
    return "-" if spread.median is None else f"{spread.median:,.0f}"


def render_terminal(report: TrialReport, console) -> None:
    console.print(trials_table(report))
    for variant in report.variants:
        c = variant.config
        if c.error:
            console.print(f"{c.name}: {c.status}: {c.error}")
            if c.stderr_tail:
                console.print(c.stderr_tail, markup=False)
        s = variant.semantics
        if s is not None and s.verdict == "changed":
            console.print(
                f"{c.name}: the loss differs from step {s.first_changed_step} on by up "
                f"to {s.max_deviation:.1e} relative (tolerance {s.tolerance:.0e}: "
                f"{s.tolerance_reason}); not kept",
                markup=False,
            )
        if s is not None and s.verdict == RANDOM_DRAWS_DIFFER:
            console.print(
                f"{c.name}: kept (random draws differ: augmentation/shuffling now runs "
                "in worker processes; the learning is statistically the same): the "
                f"loss differs by up to {s.max_deviation:.1e} relative while the "
                "baseline reproduces itself exactly",
                markup=False,
            )
        if s is not None and s.verdict == OPTIMISATION_CHANGED:
            console.print(
                f"{c.name}: speed compared per sample (a step holds more samples); the "
                f"optimisation changed: where both runs had seen as many samples "
                f"({s.compared_steps} points), the loss differs by up to "
                f"{s.max_deviation:.1e} relative; re-check convergence before adopting it",
                markup=False,
            )
        if variant.verdict == "suspicious":
            console.print(
                f"{c.name}: suspicious: {variant.speedup.median:.2f}x is more than the "
                "phases it acts on allow (diagnosis breakdown) or than the product of "
                "its parts' speedups; likely noise or a measurement artefact, not "
                "recommended",
                markup=False,
            )
        if s is not None and s.verdict == "unverified":
            if s.baseline_noise is not None and s.baseline_noise > s.tolerance:
                console.print(
                    f"{c.name}: baseline repeats differ by {s.baseline_noise:.1e} with "
                    f"the same seed, so results cannot be compared",
                    markup=False,
                )
            else:
                console.print(
                    f"{c.name}: results cannot be compared ({s.tolerance_reason})", markup=False
                )
    if report.repeats < MIN_ROUNDS:
        console.print(
            f"{report.repeats} repeat(s): too few runs to tell a gain from noise, so "
            f"no fix is called faster or slower; use --repeats {MIN_ROUNDS}",
            markup=False,
        )
    for variant in report.variants:
        if variant.verdict in DECIDED and variant.speedup is not None:
            console.print(decided_line(variant), markup=False)
    if report.baseline_spread is not None:
        console.print(
            f"baseline run-to-run spread: {report.baseline_spread * 100:.0f}% in wall time "
            "(a wall-time speedup must clear it unless 5 paired rounds or more decide it)",
            markup=False,
        )
    for config in [report.baseline, *(v.config for v in report.variants)]:
        if config.files_not_restored:
            console.print(not_restored_line(config), markup=False, highlight=False)
    for name, reason in report.not_applicable.items():
        console.print(f"{name}: not tried: {reason}", markup=False)
    for suggestion in report.suggestions:
        console.print(f"suggestion {suggestion.name}: {suggestion.reason}", markup=False)
    console.print(
        f"trials took {report.total_s:.1f} s (one baseline run: {report.baseline.elapsed_s:.1f} s)"
    )
    if report.permanent_change:
        console.print("To make the kept fixes permanent:", markup=False)
        console.print(report.permanent_change, markup=False, highlight=False)


def not_restored_line(config: ConfigResult) -> str:
    """The files a configuration's runs changed in the program's folder and could not put back:
    the user should know their folder is not as it was."""
    files = config.files_not_restored
    return (
        f"{config.name}: {len(files)} file(s) in the program's folder changed by its runs and "
        "not put back (changed by a process started afresh, which the trial does not watch, or "
        "past the copy limit): " + ", ".join(files)
    )


DECIDED = ("faster", "slower", "no clear gain")
CLOCKS = {"cpu": "CPU time (the training process's own work)", "wall": "wall time"}


def decided_line(variant: VariantResult) -> str:
    """Which clock decided a verdict, and on what: the 90% paired interval where 5 rounds or
    more give one, else the rounds' median and range."""
    speedup = variant.decided_speedup or (
        variant.cpu_speedup if variant.decided_on == "cpu" else variant.speedup
    )
    rounds = speedup.count if speedup is not None else 0
    if variant.interval:
        low, high = variant.interval
        said = f"{low:.2f}-{high:.2f}x (90% paired interval, {rounds} rounds)"
        if variant.verdict == "no clear gain" and low < 1 < high:
            # said plainly: what these rounds cannot tell from no change (issue 9: a stated
            # saving of a few percent left "undecided" against such an interval)
            said += (
                f": a gain under {100 * (1 - 1 / high):.0f}% or a loss under "
                f"{100 * (1 / low - 1):.0f}% is within the noise of these rounds"
            )
    elif speedup is not None and speedup.median is not None:
        said = (
            f"median {speedup.median:.2f}x, rounds {speedup.low:.2f}-{speedup.high:.2f}x "
            f"({rounds} rounds)"
        )
    else:
        said = "not measured"
    clock = CLOCKS.get(variant.decided_on) or (
        f"the {', '.join(variant.phase_clock)} phase's time taken off the step"
    )
    return f"{variant.config.name}: {variant.verdict} on {clock}: {said}"


def render_json(report: TrialReport) -> str:
    return json.dumps({"trials": report.to_dict()}, indent=2)
