"""False alarms under load: how often a warning or an error appears on a CLEAN program when the
machine is busy, and whether the planted problems are still found under the same load.

Runs `torchdoctor diagnose --json` (the default whole-cycle mode, as a user would) in
subprocesses pinned to one core, beside `--busy` busy-loop processes pinned to the same core
(`0`: the core alone), on the clean programs: scripts/clean_*.py and the `--fixed` control of
every planted script of `--set` (tests/diagnose/rules/styles.py). With `--baseline SRC` (a
source folder of another version, e.g. `git archive 39d04e6 src | tar -x -C /tmp/base`), every
run is made with both versions back to back, their order alternating, so that both meet the
same load. Loads alternate within each repeat. Prints, per rule and load, how many clean runs
got it as a warning or an error, and the scripts it fired on. With `--planted`, also runs the
planted scripts whose problem a timing-based rule finds (scripts/TIMING_PLANTED and the set's
rows) and prints how many found their problem.

    OMP_NUM_THREADS=1 .venv/bin/python bench/false_alarms.py [--set styles3] [--busy 0,1,2]
        [--repeats 1] [--baseline /tmp/base/src] [--planted] [NAME ...]
"""

from __future__ import annotations

import argparse
import os
from collections import Counter, defaultdict
from pathlib import Path

from _busy import busy_loops, stop
from planted_styles import SETS, diagnose

SCRIPTS = Path(__file__).resolve().parent.parent / "tests" / "diagnose" / "rules" / "scripts"
CLEAN = ["clean_loop", "clean_gru_language_model"]
# rules whose decision rests on a timing (a phase's seconds, step times, a share of the step)
TIMING_CODES = {
    "D101", "D102", "D110", "D111", "D203", "D215", "D304", "D401", "D503", "D504", "D701",
    "D702", "D801",
}  # fmt: skip
# planted scripts of scripts/ whose problem one of those rules finds
TIMING_PLANTED = {
    "d203_python_loop": "D203",
    "d304_eval_every_step": "D304",
    "d504_growing_history": "D504",
    "d701_checkpoint_every_step": "D701",
    "d702_print_every_step": "D702",
    "d215_ema_deepcopy": "D215",
}


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def alarms(findings: list[dict]) -> set[str]:
    return {f["id"] for f in findings if f["severity"] in ("warning", "error")}


class Tally:
    """Per (version, load): the rules that fired on clean runs, and the planted problems found."""

    def __init__(self) -> None:
        self.fired: dict[tuple[str, int], Counter] = defaultdict(Counter)
        self.where: dict[tuple[str, str], set[str]] = defaultdict(set)
        self.found: Counter = Counter()
        self.failed: list[str] = []

    def table(self, versions: list[str], loads: list[int], clean: int, planted: int) -> None:
        columns = [(version, busy) for busy in loads for version in versions]
        names = " | ".join(f"{version}, busy {busy}" for version, busy in columns)
        print(f"| warning or error on a clean program | {names} | scripts |")
        print("| --- |" + " --- |" * len(columns) + " --- |")
        codes = sorted({code for counter in self.fired.values() for code in counter})
        for code in codes:
            counts = " | ".join(f"{self.fired[c][code]}/{clean}" for c in columns)
            scripts = "; ".join(
                f"{v}: {', '.join(sorted(self.where[v, code]))}"
                for v in versions
                if self.where[v, code]
            )
            print(f"| {code} | {counts} | {scripts} |")
        if not codes:
            print("| (none) |" + f" 0/{clean} |" * len(columns) + " |")
        if planted:
            counts = " | ".join(f"{self.found[c]}/{planted}" for c in columns)
            print(f"| planted timing problems found | {counts} | |")
        for line in self.failed:
            print(f"diagnose failed: {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=sorted(SETS), default="styles3")
    parser.add_argument("--busy", default="0,1,2", help="busy loops beside the run, per column")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--budget", type=float, default=10.0)
    parser.add_argument("--baseline", help="source folder of the version to compare with")
    parser.add_argument("--planted", action="store_true", help="also check planted timing rules")
    parser.add_argument("names", nargs="*", help="only these scripts")
    opts = parser.parse_args()
    loads = [int(b) for b in opts.busy.split(",")]
    rows = [p for p in SETS[opts.set] if not opts.names or p.script in opts.names]
    clean = [(name, SCRIPTS / f"{name}.py", []) for name in CLEAN if not opts.names]
    clean += [(p.script, p.path, ["--fixed"]) for p in rows]
    planted: list[tuple[str, Path, str]] = []
    if opts.planted:
        planted = [(name, SCRIPTS / f"{name}.py", code) for name, code in TIMING_PLANTED.items()]
        planted = [row for row in planted if not opts.names or row[0] in opts.names]
        planted += [(p.script, p.path, p.code) for p in rows if p.code in TIMING_CODES]
    versions = {"this": {}}
    if opts.baseline:
        versions = {"baseline": {"PYTHONPATH": opts.baseline}, "this": {}}
    core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})  # the diagnose subprocesses inherit the core
    print(f"core {core}; load before: {load()}", flush=True)
    tally = Tally()
    runs = 0
    for repeat in range(opts.repeats):
        for busy in loads if repeat % 2 == 0 else loads[::-1]:
            loops = busy_loops(busy, core)
            try:
                for name, path, args, code in [(*row, None) for row in clean] + [
                    (name, path, [], code) for name, path, code in planted
                ]:
                    runs += 1
                    order = list(versions) if runs % 2 else list(versions)[::-1]
                    for version in order:
                        try:
                            findings = diagnose(path, args, opts.budget, versions[version])
                        except RuntimeError as exc:
                            tally.failed.append(f"{name} ({version}, busy {busy}): {exc}"[-200:])
                            continue
                        if code is None:
                            for alarm in alarms(findings):
                                tally.fired[version, busy][alarm] += 1
                                tally.where[version, alarm].add(name)
                        else:
                            tally.found[version, busy] += code in {f["id"] for f in findings}
            finally:
                stop(loops)
            print(f"repeat {repeat + 1}, {busy} busy loop(s) done; load {load()}", flush=True)
    print(f"\nload after: {load()}; {len(clean)} clean programs, {opts.repeats} repeat(s)")
    tally.table(list(versions), loads, len(clean) * opts.repeats, len(planted) * opts.repeats)


if __name__ == "__main__":
    main()
