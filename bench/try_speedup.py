"""What `torchdoctor diagnose --try all` gains on naive scripts, and what the trials cost.

    .venv/bin/python bench/try_speedup.py [--steps 10] [--repeats 3]

For each script: its own full run time (a plain `python script.py`), the diagnosis, then the
trials of every fix the diagnosis recommends; prints each variant's speedup and semantics verdict
and the trials' wall time as a multiple of the script's own run. Scripts: the demo's naive loop
(seed 001 as written), a float64 MLP and a data-bound loader (tests/trials/scripts).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = {
    "naive_loop (demo, seed 001)": (
        str(ROOT / "src/torchdoctor/demo/naive_loop.py"),
        ["--epochs", "1"],
    ),
    "float64_mlp": (str(ROOT / "tests/trials/scripts/float64_mlp.py"), []),
    "slow_data (data-bound)": (str(ROOT / "tests/trials/scripts/slow_data.py"), []),
}


def own_run_s(script: str, args: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, script, *args], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def _ratio(spread) -> str:
    if spread is None or spread.median is None:
        return "-"
    return f"{spread.median:.2f}x ({spread.low:.2f}-{spread.high:.2f})"


def _discarded(steps: int) -> str:
    return f" (discarded {steps} prefetched steps)" if steps else ""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    from torchdoctor.diagnose.api import diagnose_script
    from torchdoctor.trials.api import run_trials

    for label, (script, args) in SCRIPTS.items():
        own = own_run_s(script, args)
        diagnosis = diagnose_script(script, args, steps=options.steps, quiet=True)
        report = run_trials(
            script, args, "all", steps=options.steps, repeats=options.repeats, diagnosis=diagnosis
        )
        print(
            f"\n== {label}: own run {own:.1f} s; trials {report.total_s:.1f} s "
            f"= {report.total_s / own:.1f}x the script's own run",
            flush=True,
        )
        base = report.baseline
        spread = report.baseline_spread
        print(
            f"   baseline: {base.step_s.median * 1000:.1f} ms/step, run-to-run spread "
            f"{'-' if spread is None else f'{spread * 100:.0f}%'}",
            flush=True,
        )
        for v in report.variants:
            sem = v.semantics.verdict if v.semantics else "-"
            print(
                f"   {v.config.name:16s} speedup {_ratio(v.speedup):22s} "
                f"cpu {_ratio(v.cpu_speedup):22s} semantics {sem:10s} {v.verdict}"
                f"{_discarded(v.config.prefetch_steps)}",
                flush=True,
            )
        for name, reason in report.not_applicable.items():
            print(f"   {name:16s} not tried: {reason}")


if __name__ == "__main__":
    main()
