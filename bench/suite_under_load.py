"""The test suite as CI runs it (`make test`: two xdist workers, one torch thread each), with
`--busy` extra busy-loop processes beside it and reruns off, so that the tests that fail on a
slower or busier CI machine show before `flaky` reruns hide them. Prints the machine load before
and after, the wall time, and each failed test.

    OMP_NUM_THREADS=1 .venv/bin/python bench/suite_under_load.py --busy 1
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUSY_LOOP = "while True: pass"


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", type=int, default=1, help="busy-loop processes beside the suite")
    parser.add_argument("--one-core", action="store_true", help="taskset -c 0: one core for both")
    parser.add_argument("tests", nargs="*", default=["tests"])
    args = parser.parse_args()
    command = [sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadfile",
               "-p", "no:cacheprovider", "-p", "no:rerunfailures", *args.tests]  # fmt: skip
    if args.one_core:
        command = ["taskset", "-c", "0", *command]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    busy = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(args.busy)]
    print(f"load before: {load()}; {args.busy} busy loop(s); {' '.join(command)}", flush=True)
    started = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    finally:
        for process in busy:
            process.kill()
    wall = time.perf_counter() - started
    failed = [line for line in done.stdout.splitlines() if line.startswith("FAILED ")]
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr
    print(f"load after: {load()}; wall {wall:.0f} s; {summary}")
    for line in failed:
        print(line)
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())
