"""CPU time of `torchdoctor lint` on the same files, this checkout against an earlier commit.

Each version lints the files in its own subprocess (`PYTHONPATH` set to that version's `src`,
taken with `git archive`), the two alternating `--repeats` times, so both see the same machine
load; the CPU seconds of each child (user + system, from `resource`) are compared, which a
shared machine disturbs far less than the wall clock.

Usage: .venv/bin/python bench/lint_speed_versions.py --base d8ea139 PATH [PATH ...]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cpu_of_child(src: Path, paths: list[str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one lint run of `paths` by the code under `src`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(src), "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "torchdoctor", "lint", "--quiet", "--jobs", "1", *paths]
    subprocess.run(command, env=env, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the commit to compare with")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "base.tar"
        subprocess.run(
            ["git", "-C", str(ROOT), "archive", "-o", str(archive), args.base, "src"], check=True
        )
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        versions = {args.base: Path(tmp) / "src", "this checkout": ROOT / "src"}
        cpu: dict[str, list[float]] = {name: [] for name in versions}
        for _ in range(args.repeats):
            for name, src in versions.items():
                seconds, wall = cpu_of_child(src, args.paths)
                cpu[name].append(seconds)
                print(f"{name:>14}: {seconds:7.2f} s CPU ({wall:6.1f} s wall)", flush=True)
    base, new = (min(values) for values in cpu.values())
    print(f"\nbest of {args.repeats}: {base:.2f} s -> {new:.2f} s CPU, {base / new:.2f}x faster")
    return 0


if __name__ == "__main__":
    sys.exit(main())
