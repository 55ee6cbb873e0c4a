"""What-if probe seconds against their budget (10% of the diagnosed wall time), this code beside
another (`--old-src`: a `src` directory, e.g. `git archive 39d04e6 src | tar -x -C /tmp/old`),
run alternately on the planted scripts whose data what-ifs are planned, each a fresh
`torchdoctor diagnose --json` process (whole-cycle mode, the default budget):

    OMP_NUM_THREADS=1 .venv/bin/python bench/whatif_budget.py --old-src /tmp/old/src [--rounds 2]

Per script and code: the median and largest ratio of probe seconds to budget over the rounds
(over 1: the budget was overrun) and the data findings' basis.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _planted import SCRIPTS

NAMES = (
    "d101_main_process_loading",
    "d103_workers_respawned",
    "d105_expensive_getitem",
    "d108_tensordataset_fetch",
    "d111_slow_collate",
    "multi_respawn_adam",
    "whatif_workers_beside_long_optimizer",
    "whatif_batched_fetch_two_loaders",
)
DATA_FINDINGS = ("D101", "D103", "D108", "D111")


def diagnose(name: str, src: str | None) -> dict:
    """One diagnosis in a fresh process; `src` first on the path (None: this tree's code)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    if src:
        env["PYTHONPATH"] = src
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        command = [sys.executable, "-m", "torchdoctor", "diagnose", "--quiet", "--json", str(out)]
        subprocess.run([*command, str(SCRIPTS / f"{name}.py")], env=env, capture_output=True)
        return json.loads(out.read_text())


def summary(reports: list[dict]) -> str:
    ratios = [r["run"]["whatif"]["seconds"] / r["run"]["whatif"]["budget_s"] for r in reports]
    bases = sorted(
        {
            f"{f['id']} {f['saving']['basis']}"
            for r in reports
            for f in r["findings"]
            if f["id"] in DATA_FINDINGS
        }
    )
    budgets = statistics.median(r["run"]["whatif"]["budget_s"] for r in reports)
    return (
        f"{statistics.median(ratios):.2f} / {max(ratios):.2f} of {budgets:.2f} s "
        f"({', '.join(bases) or 'no data finding'})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old-src", required=True, help="the other code's src directory")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("names", nargs="*", default=list(NAMES))
    args = parser.parse_args()
    print("| script | new: seconds/budget median / max | old: median / max |")
    print("|---|---|---|")
    for name in args.names:
        new, old = [], []
        for _ in range(args.rounds):  # alternately: a load change hits both codes alike
            new.append(diagnose(name, None))
            old.append(diagnose(name, args.old_src))
        print(f"| {name} | {summary(new)} | {summary(old)} |", flush=True)


if __name__ == "__main__":
    main()
