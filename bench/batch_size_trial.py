"""D202 stated vs `--try batch_size` measured: does the saving the diagnosis states for a larger
batch match what running the program with that batch gives, per sample?

For each script: `diagnose` (whole-cycle default, what-if probes on, in this process), D202's
stated saving (a share of the run's time per sample, measured by the batch what-if or estimated)
and its factor; then `--try batch_size` with that diagnosis (the factor it names, the learning
rate scaled), repeats interleaved round by round, each run at least MIN_WINDOW_S, further rounds
where rounds disagree, as `torchdoctor diagnose --try batch_size` does. The tried saving is
1 - 1/speedup per sample, on the training process's CPU time (the fix changes that process's own
work; steadier on a shared machine) and on wall time, with the middle range over paired rounds.
A control with a batch that already fills the machine shows what the trial gives where D202 is
silent.

    OMP_NUM_THREADS=1 .venv/bin/python bench/batch_size_trial.py [--repeats 3] [--steps 10]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import time

import torch

from _planted import SCRIPTS
from torchdoctor.diagnose.api import diagnose_script
from torchdoctor.trials.api import run_trials
from torchdoctor.trials.cycle import MIN_WINDOW_S

CASES = (
    ("d202_wide_mlp_batch_of_two", "d202_wide_mlp_batch_of_two.py", []),
    ("s11_tiny_batch_conv", "styles/s11_tiny_batch_conv.py", []),
    ("s11_tiny_batch_conv --fixed (control)", "styles/s11_tiny_batch_conv.py", ["--fixed"]),
)


def percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def saved(speedup: float | None) -> float | None:
    return None if not speedup else 1 - 1 / speedup


def measure(path: str, args: list[str], steps: int, repeats: int) -> str:
    with contextlib.redirect_stdout(io.StringIO()):
        report = diagnose_script(str(SCRIPTS / path), args, steps=None, warmup=3, budget_s=30)
    d202 = next((f for f in report.findings if f.id == "D202"), None)
    stated = (
        f"{percent(d202.saving)} ({d202.saving_basis}, {d202.details['batch_factor']}x)"
        if d202
        else "silent"
    )
    trials = run_trials(
        str(SCRIPTS / path),
        args,
        "batch_size",
        steps=steps,
        repeats=repeats,
        diagnosis=report,
        min_window_s=MIN_WINDOW_S,
        max_repeats=2 * repeats,
    )
    variant = trials.variants[0]
    cpu, wall = variant.cpu_speedup, variant.speedup
    middle = cpu.middle() if cpu is not None else None
    tried = (
        f"{percent(saved(cpu.median))} cpu ({percent(saved(middle[0]))}.."
        f"{percent(saved(middle[1]))}, {cpu.count} rounds)"
        if cpu is not None and cpu.median and middle
        else "-"
    )
    ratio = (
        f"{d202.saving / saved(cpu.median):.2f}x"
        if d202 and cpu is not None and cpu.median and (saved(cpu.median) or 0) > 0
        else "-"
    )
    s = variant.semantics
    loss = f"{s.verdict} (max {s.max_deviation:.2f})" if s and s.max_deviation is not None else "-"
    return (
        f"{stated} | {tried} | {percent(saved(wall.median if wall else None))} | "
        f"{variant.verdict} | {ratio} | {loss}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10, help="at least; whole cycles rule")
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    torch.set_num_threads(1)
    started = time.perf_counter()
    print(
        "| script | D202 stated (basis, factor) | --try batch_size per sample (middle range) "
        "| wall | trial verdict | stated / tried | losses at equal samples seen |"
    )
    print("|---|---|---|---|---|---|---|")
    for label, path, args in CASES:
        print(f"| {label} | {measure(path, args, options.steps, options.repeats)} |", flush=True)
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
