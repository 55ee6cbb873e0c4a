"""False alarms under load: how often a warning or an error appears on a CLEAN program when the
machine is busy, and whether the planted problems are still found under the same load.

Diagnoses (the default whole-cycle mode, as `torchdoctor diagnose` runs, what-ifs included) in
a worker process pinned to one core, beside `--busy` busy-loop processes pinned to the same core
(`0`: the core alone), the clean programs: scripts/clean_*.py and the `--fixed` control of every
planted script of `--set` (tests/diagnose/rules/styles.py). The worker imports torch once and
diagnoses the scripts one after another in-process (on a loaded machine a fresh interpreter
spends more time importing torch than diagnosing). With `--baseline SRC` (a source folder of
another version, e.g. `git archive 39d04e6 src | tar -x -C /tmp/base`), every script is
diagnosed by both versions back to back, their order alternating, so that both meet the same
load. Loads alternate within each repeat. Prints, per rule and load, how many clean runs
got it as a warning or an error, and the scripts it fired on, then per set the clean runs that
got nothing above info. With `--planted`, also runs the
planted scripts whose problem a timing-based rule finds (scripts/TIMING_PLANTED and the set's
rows) and prints how many found their problem.

    OMP_NUM_THREADS=1 .venv/bin/python bench/false_alarms.py [--set styles3] [--busy 0,1,2]
        [--repeats 1] [--steps N] [--no-whatif] [--baseline /tmp/base/src] [--planted] [NAME ...]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

from _busy import busy_loops, stop
from planted_styles import SETS

SCRIPTS = Path(__file__).resolve().parent.parent / "tests" / "diagnose" / "rules" / "scripts"
CLEAN = ["clean_loop", "clean_gru_language_model", "clean_distillation_wide_teacher"]
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


def set_of(name: str) -> str:
    """The set a clean program comes from: scripts/ (clean_*) or a planted set's control."""
    if name in CLEAN:
        return "scripts"
    return next(s for s, rows in SETS.items() if s != "all" and any(p.script == name for p in rows))


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


class Tally:
    """Per (version, load): the rules that fired on clean runs, and the planted problems found."""

    def __init__(self) -> None:
        self.fired: dict[tuple[str, int], Counter] = defaultdict(Counter)
        self.where: dict[tuple[str, str], set[str]] = defaultdict(set)
        self.found: Counter = Counter()
        self.failed: list[str] = []
        # (version, busy, set) -> [clean runs with no warning or error, clean runs]
        self.quiet: dict[tuple[str, int, str], list[int]] = defaultdict(lambda: [0, 0])

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
        self.quiet_table(columns)
        for line in self.failed:
            print(f"diagnose failed: {line}")

    def quiet_table(self, columns: list[tuple[str, int]]) -> None:
        """Per set: the clean runs that got nothing above info."""
        sets = sorted({key[2] for key in self.quiet})
        names = " | ".join(f"{version}, busy {busy}" for version, busy in columns)
        print(f"\n| clean programs quiet (nothing above info) | {names} |")
        print("| --- |" + " --- |" * len(columns))
        for name in [*sets, "all"]:
            cells = []
            for version, busy in columns:
                keys = [k for k in self.quiet if k[:2] == (version, busy)]
                keys = [k for k in keys if name in ("all", k[2])]
                quiet, runs = (sum(self.quiet[k][i] for k in keys) for i in (0, 1))
                cells.append(f"{quiet}/{runs}")
            print(f"| {name} | {' | '.join(cells)} |")


def worker(budget: float, steps: int | None, whatif: bool) -> None:
    """`--worker`: diagnose each `path args...` line of stdin in this process; print one JSON
    line per run: the codes of its findings in rank order, their severities and savings (or the
    error)."""
    import torch

    from torchdoctor.diagnose.api import diagnose_script

    for line in sys.stdin:
        path, *args = json.loads(line)
        dtype = torch.get_default_dtype()
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                report = diagnose_script(path, args, steps=steps, budget_s=budget, whatif=whatif)
            if report.run.status not in ("stopped", "completed"):
                raise RuntimeError(f"{report.run.status}: {report.run.error}")
            out = {
                "findings": [[f.id, f.severity] for f in report.findings],
                "savings": [[f.saving, f.saving_basis] for f in report.findings],
            }
        except Exception as exc:  # a failed diagnosis is a row that says so
            out = {"error": f"{type(exc).__name__}: {exc}"[-200:]}
        finally:
            torch.set_default_dtype(dtype)  # a script may change it (s01 float64)
        sys.__stdout__.write(json.dumps(out) + "\n")
        sys.__stdout__.flush()


class Worker:
    """A `--worker` process of one version: one script at a time, its findings back."""

    def __init__(self, env: dict, opts: argparse.Namespace) -> None:
        command = [sys.executable, __file__, "--worker", "--budget", str(opts.budget)]
        command += [] if opts.steps is None else ["--steps", str(opts.steps)]
        command += ["--no-whatif"] if opts.no_whatif else []
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "OMP_NUM_THREADS": "1", **env},
        )

    def diagnose(self, path: Path, args: list[str]) -> dict:
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps([str(path), *args]) + "\n")
        self.process.stdin.flush()
        while line := self.process.stdout.readline():
            if line.startswith('{"'):
                return json.loads(line)
        raise SystemExit(f"worker ended: exit {self.process.wait()}")

    def close(self) -> None:
        assert self.process.stdin
        self.process.stdin.close()
        self.process.wait()


def diagnosed_block(versions: dict, opts: argparse.Namespace, busy: int, core: int,
                    order: list[str], runs: list[tuple[Path, list[str]]]):  # fmt: skip
    """Each of `runs` (path, args) diagnosed once per version, beside `busy` busy loops on
    `core`, the versions' order alternating run by run: yields (index, version, result)."""
    loops = busy_loops(busy, core)
    workers = {v: Worker(versions[v], opts) for v in order}
    try:
        for index, (path, args) in enumerate(runs):  # versions back to back
            for version in order if index % 2 == 0 else order[::-1]:
                yield index, version, workers[version].diagnose(path, args)
    finally:
        for each in workers.values():
            each.close()
        stop(loops)


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """The options of how each script is diagnosed, and against which version."""
    parser.add_argument("--budget", type=float, default=10.0)
    parser.add_argument("--steps", type=int, help="measured steps (default: whole-cycle mode)")
    parser.add_argument("--no-whatif", action="store_true", help="no what-if timing after runs")
    parser.add_argument("--baseline", help="source folder of the version to compare with")


def said(result: dict) -> str:
    """A run's findings as `D210(warning) D202(info)`, or its error."""
    return result.get("error") or " ".join(f"{c}({s})" for c, s in result["findings"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=sorted(SETS), default="styles3")
    parser.add_argument("--busy", default="0,1,2", help="busy loops beside the run, per column")
    parser.add_argument("--repeats", type=int, default=1)
    add_run_options(parser)
    parser.add_argument("--planted", action="store_true", help="also check planted timing rules")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("names", nargs="*", help="only these scripts")
    opts = parser.parse_args()
    if opts.worker:
        return worker(opts.budget, opts.steps, not opts.no_whatif)
    loads = [int(b) for b in opts.busy.split(",")]
    rows = [p for p in SETS[opts.set] if not opts.names or p.script in opts.names]
    clean = [
        (name, SCRIPTS / f"{name}.py", []) for name in CLEAN if name in opts.names or not opts.names
    ]
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
    runs = [(path, args) for _, path, args in clean] + [(path, []) for _, path, _ in planted]
    names = [name for name, _, _ in clean] + [name for name, _, _ in planted]
    codes = [None] * len(clean) + [code for _, _, code in planted]
    for repeat in range(opts.repeats):
        for busy in loads if repeat % 2 == 0 else loads[::-1]:
            order = list(versions) if (repeat + busy) % 2 == 0 else list(versions)[::-1]
            results: dict[str, list[dict]] = {v: [] for v in order}
            for index, version, result in diagnosed_block(versions, opts, busy, core, order, runs):
                results[version].append(result)
                print(f"  busy {busy}, {version}, {names[index]}: {said(result)}", flush=True)
            for version, rows in results.items():
                for name, code, result in zip(names, codes, rows):
                    if "error" in result:
                        tally.failed.append(f"{name} ({version}, busy {busy}): {result['error']}")
                        continue
                    found = result["findings"]
                    if code is None:
                        alarms = {c for c, severity in found if severity != "info"}
                        for alarm in alarms:
                            tally.fired[version, busy][alarm] += 1
                            tally.where[version, alarm].add(name)
                        counts = tally.quiet[version, busy, set_of(name)]
                        counts[0] += not alarms
                        counts[1] += 1
                    else:
                        tally.found[version, busy] += code in {c for c, _ in found}
            print(f"repeat {repeat + 1}, {busy} busy loop(s) done; load {load()}", flush=True)
    print(f"\nload after: {load()}; {len(clean)} clean programs, {opts.repeats} repeat(s)")
    tally.table(list(versions), loads, len(clean) * opts.repeats, len(planted) * opts.repeats)


if __name__ == "__main__":
    main()
