"""The same answer on every run: diagnoses each script `--repeats` times, with and without busy
loops pinned to its core, and prints per script and load each finding's presence count, its
ranks, severities and savings, and the findings that flipped (present in some runs and not in
others, or at another severity).

Reuses bench/false_alarms.py's worker: one process per load and repeat, pinned to one core
beside `--busy` busy-loop processes pinned to the same core, imports torch once and diagnoses the
scripts one after another in-process (the default whole-cycle mode, what-ifs included, as
`torchdoctor diagnose` runs). Loads alternate within each repeat, so both meet the same machine.
A script is named as in tests/diagnose/rules/scripts/ (`d210_optimizer_loop`) or as a planted
set's row (`s25_optimizer_foreach_false`); `NAME:fixed` runs its control (`--fixed`).

    OMP_NUM_THREADS=1 .venv/bin/python bench/finding_stability.py [--repeats 5] [--busy 0,1]
        [--budget 10] [--steps N] [--baseline /tmp/base/src] NAME[:fixed] ... > LOG
    .venv/bin/python bench/finding_stability.py --from-log LOG  # a stopped run's table
"""

from __future__ import annotations

import argparse
import os
import re
from collections import defaultdict
from pathlib import Path

from false_alarms import SCRIPTS, add_run_options, diagnosed_block, load, said
from planted_styles import SETS


def script_of(name: str) -> tuple[Path, list[str]]:
    """`name` or `name:fixed` -> the script's path and its arguments."""
    base, _, variant = name.partition(":")
    args = ["--fixed"] if variant == "fixed" else []
    if (SCRIPTS / f"{base}.py").exists():
        return SCRIPTS / f"{base}.py", args
    row = next((p for p in SETS["all"] if p.script == base), None)
    if row is None:
        raise SystemExit(f"no script named {base!r} in {SCRIPTS} or the planted sets")
    return row.path, args


class Runs:
    """Per (version, script, busy): each run's findings in rank order."""

    def __init__(self) -> None:
        self.runs: dict[tuple[str, str, int], list[dict]] = defaultdict(list)

    def add(self, version: str, name: str, busy: int, result: dict) -> None:
        self.runs[version, name, busy].append(result)

    def flips(self, version: str, name: str, busy: int) -> list[str]:
        """Codes present in some runs and not in others, or at more than one severity."""
        runs = [r for r in self.runs[version, name, busy] if "error" not in r]
        present: dict[str, set[str]] = defaultdict(set)
        counts: dict[str, int] = defaultdict(int)
        for run in runs:
            for code, severity in run["findings"]:
                present[code].add(severity)
            for code in {code for code, _ in run["findings"]}:  # a code twice (two lines): once
                counts[code] += 1
        return sorted(c for c in present if counts[c] < len(runs) or len(present[c]) > 1)

    def table(self, names: list[str], loads: list[int], versions: list[str]) -> None:
        print("| script | version, busy | flipped | findings: runs, ranks, severity, saving |")
        print("| --- | --- | --- | --- |")
        total: dict[tuple[str, int], int] = defaultdict(int)
        for name in names:
            for busy in loads:
                for version in versions:
                    if (version, name, busy) not in self.runs:
                        continue
                    flips = self.flips(version, name, busy)
                    total[version, busy] += len(flips)
                    cell = ", ".join(flips) or "-"
                    print(
                        f"| {name} | {version}, {busy} | {cell} | {self.row(version, name, busy)} |"
                    )
        print("\n| flipped findings, all scripts | " + " | ".join(
            f"{version}, busy {busy}: {count}" for (version, busy), count in sorted(total.items())
        ) + " |")  # fmt: skip

    def row(self, version: str, name: str, busy: int) -> str:
        """`D210 5/5 rank 1,1,1,2,1 warning 8-11%; ...`, the flipping codes marked `*`."""
        runs = [r for r in self.runs[version, name, busy] if "error" not in r]
        flips = set(self.flips(version, name, busy))
        codes: dict[str, dict] = {}
        for run in runs:
            savings = run.get("savings") or [[None, "?"]] * len(run["findings"])
            seen: set[str] = set()
            for rank, ((code, severity), (saving, basis)) in enumerate(
                zip(run["findings"], savings), 1
            ):
                if code in seen:  # the same code on another line: its first (highest) rank
                    continue
                seen.add(code)
                entry = codes.setdefault(code, {"ranks": [], "severity": set(), "saving": []})
                entry["ranks"].append(rank)
                entry["severity"].add(severity)
                entry["saving"].append((saving, basis))
        cells = []
        for code, entry in sorted(codes.items(), key=lambda item: -len(item[1]["ranks"])):
            share = [s for s, _ in entry["saving"] if s is not None]
            measured = sum(basis == "measured" for _, basis in entry["saving"])
            saving = f" {min(share):.0%}-{max(share):.0%} ({measured} measured)" if share else ""
            cells.append(
                f"{'*' if code in flips else ''}{code} {len(entry['ranks'])}/{len(runs)} "
                f"rank {','.join(map(str, entry['ranks']))} "
                f"{'/'.join(sorted(entry['severity']))}{saving}"
            )
        errors = len(self.runs[version, name, busy]) - len(runs)
        return ("; ".join(cells) or "(none)") + (f"; {errors} failed" if errors else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", default="0,1", help="busy loops beside the run, per column")
    parser.add_argument("--repeats", type=int, default=5)
    add_run_options(parser)
    parser.add_argument("--from-log", help="only print the table of a run's progress lines")
    parser.add_argument("names", nargs="*", help="scripts (NAME or NAME:fixed)")
    opts = parser.parse_args()
    if opts.from_log:
        return from_log(opts.from_log)
    if not opts.names:
        parser.error("name the scripts to diagnose")
    loads = [int(b) for b in opts.busy.split(",")]
    scripts = {name: script_of(name) for name in opts.names}
    versions = {"this": {}}
    if opts.baseline:
        versions = {"baseline": {"PYTHONPATH": opts.baseline}, "this": {}}
    core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})  # the workers inherit the core
    print(f"core {core}; load before: {load()}", flush=True)
    runs, names = Runs(), list(scripts)
    for repeat in range(opts.repeats):
        for busy in loads if repeat % 2 == 0 else loads[::-1]:
            order = list(versions) if (repeat + busy) % 2 == 0 else list(versions)[::-1]
            block = diagnosed_block(versions, opts, busy, core, order, list(scripts.values()))
            for index, version, result in block:
                name = names[index]
                runs.add(version, name, busy, result)
                print(f"  {repeat + 1} busy {busy} {version} {name}: {said(result)}", flush=True)
            print(f"repeat {repeat + 1}, {busy} busy loop(s) done; load {load()}", flush=True)
    print(f"\nload after: {load()}; {opts.repeats} run(s) per script, version and load\n")
    runs.table(list(scripts), loads, list(versions))


PROGRESS = re.compile(r"  \d+ busy (\d+) (\w+) (\S+):(?: (.*))?$")


def from_log(path: str) -> None:
    """`--from-log LOG`: the table of a run's progress lines (one stopped before its end): codes
    and ranks; severities where the lines give them, savings not."""
    runs, names, loads, versions = Runs(), {}, set(), {}
    for line in Path(path).read_text().splitlines():
        if match := PROGRESS.match(line):
            busy, version, name, said = match.groups()
            if said and said.startswith(("RuntimeError", "Error", "diagnose")):
                runs.add(version, name, int(busy), {"error": said})
                continue
            found = [re.match(r"(\w+)(?:\((\w+)\))?$", c).groups() for c in (said or "").split()]
            runs.add(version, name, int(busy), {"findings": [[c, s or "?"] for c, s in found]})
            names[name], versions[version] = None, None
            loads.add(int(busy))
    runs.table(list(names), sorted(loads), list(versions))


if __name__ == "__main__":
    main()
