"""Calibration: does a finding's stated saving match what `--try` measures on the same script?

For each planted script (tests/diagnose/rules/scripts/), runs `torchdoctor diagnose` (whole-cycle
default, what-if probes on), then `--try` with every run-time fix that answers one of its findings
(trials.fixes FINDING_CODES), each fix alone against the baseline, interleaved. Prints, per
finding with a fix: the stated saving (share of run time, measured or estimated) next to the
saving --try measured (1 - 1/speedup, a share of step time), their ratio, and per script whether
the top finding is the fix with the largest measured gain. Findings whose fix has no --try trial
yet are listed with "-".

    OMP_NUM_THREADS=1 .venv/bin/python bench/calibration.py [--repeats 3] [--steps 10] [NAME ...]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import time
from pathlib import Path

import torch

from torchdoctor.diagnose.api import diagnose_script
from torchdoctor.trials.api import run_trials
from torchdoctor.trials.fixes import all_fixes

SCRIPTS = Path(__file__).resolve().parent.parent / "tests" / "diagnose" / "rules" / "scripts"
DEFAULT = (
    "d101_main_process_loading",
    "d105_expensive_getitem",
    "d103_workers_respawned",
    "d201_float64",
    "d210_optimizer_loop",
    "d301_eval_with_autograd",
    "d302_eval_in_train_mode",
    "epoch_eval_with_autograd",
    "d202_batch_too_small",
    "d702_print_every_step",
)


def fixes_by_code() -> dict[str, list[str]]:
    """Finding code -> names of the --try fixes that answer it (compile left out: minutes)."""
    table: dict[str, list[str]] = {}
    for fix in all_fixes():
        name = fix.__name__.rsplit(".", 1)[-1]
        if name == "compile":
            continue
        for code in getattr(fix, "FINDING_CODES", ()):
            table.setdefault(code, []).append(name)
    return table


def measured_saving(trials, fix: str) -> float | None:
    for variant in trials.variants:
        if variant.config.name == fix and variant.speedup and variant.speedup.median:
            return 1 - 1 / variant.speedup.median
    return None


def calibrate(name: str, steps: int, repeats: int) -> list[dict]:
    script = str(SCRIPTS / f"{name}.py")
    with contextlib.redirect_stdout(io.StringIO()):  # the script's own prints
        report = diagnose_script(script, steps=None, warmup=3, budget_s=30)
    table = fixes_by_code()
    findings = [f for f in report.findings if f.saving > 0 or f.id in table]
    fixes = sorted({fix for f in findings for fix in table.get(f.id, [])})
    gains: dict[str, float | None] = {}
    if fixes:
        trials = run_trials(script, [], fixes, steps=steps, repeats=repeats, diagnosis=report)
        gains = {fix: measured_saving(trials, fix) for fix in fixes}
    rows = []
    for rank, finding in enumerate(findings, 1):
        tried = [gains[fix] for fix in table.get(finding.id, []) if gains.get(fix) is not None]
        rows.append(
            {
                "script": name,
                "rank": rank,
                "code": finding.id,
                "stated": finding.saving,
                "basis": finding.saving_basis,
                "measured": max(tried) if tried else None,
            }
        )
    return rows


def top_is_best(rows: list[dict]) -> str:
    tried = [r for r in rows if r["measured"] is not None]
    if not rows or not tried:
        return "n/a (no fix to try)"
    best = max(tried, key=lambda r: r["measured"])
    top = rows[0]
    if top["measured"] is None:
        return f"no: top {top['code']} has no trial; best tried {best['code']}"
    return "yes" if top is best else f"no: best measured is {best['code']}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=list(DEFAULT))
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    torch.set_num_threads(1)
    started = time.perf_counter()
    print("| script | rank | finding | stated saving (basis) | --try measured | stated/measured |")
    print("|---|---|---|---|---|---|")
    verdicts = []
    for name in options.names:
        rows = calibrate(name, options.steps, options.repeats)
        for r in rows:
            measured = "-" if r["measured"] is None else f"{100 * r['measured']:.0f}%"
            ratio = "-"
            if r["measured"] is not None and r["measured"] > 0.01:
                ratio = f"{r['stated'] / r['measured']:.2f}"
            print(
                f"| {r['script']} | {r['rank']} | {r['code']} | {100 * r['stated']:.0f}% "
                f"({r['basis']}) | {measured} | {ratio} |"
            )
        if not rows:
            print(f"| {name} | - | (no finding) | - | - | - |")
        verdicts.append((name, top_is_best(rows)))
    print()
    for name, verdict in verdicts:
        print(f"top finding is the largest measured gain, {name}: {verdict}")
    print(f"\ntotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
