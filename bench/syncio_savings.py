"""Stated vs observed savings of the host-side findings: checkpoint I/O (D701), logging (D702),
anomaly detection (D211) and the program's own profiler (D212).

For each planted script (tests/diagnose/rules/scripts/), diagnoses it in this process and reads
the finding's stated saving (share of run time, with its basis). Then it runs the script plainly
(no torchdoctor) as written and with the finding's own fix applied to a copy of its source (save
every N steps as the finding suggests, print every 10th step, anomaly detection off, no
profiler), in separate processes, alternating the two, and prints the observed saving per
training step: 1 - fixed / as written, of the mean process CPU time (robust to a busy machine)
and of the median wall time between two optimizer steps (a global optimizer step hook, the only
thing added to the plain run), after 3 warm-up steps.

    OMP_NUM_THREADS=1 .venv/bin/python bench/syncio_savings.py [--rounds 3] [NAME ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import torch

from _planted import SCRIPTS, diagnose_planted

# per-step times of a plain run: the clocks at each optimizer step's end (a global post hook)
RUNNER = """
import json, runpy, statistics, sys, time
import torch
from torch.optim.optimizer import register_optimizer_step_post_hook
marks = []
register_optimizer_step_post_hook(
    lambda *_: marks.append((time.perf_counter(), time.process_time()))
)
runpy.run_path(sys.argv[1], run_name="__main__")
steps = list(zip(marks[3:], marks[4:]))  # after 3 warm-up steps
print(json.dumps({
    "wall": statistics.median(b[0] - a[0] for a, b in steps),
    "cpu": statistics.mean(b[1] - a[1] for a, b in steps),
}))
"""

PROFILER = "with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:"
PROFILER_TABLE = "    print(prof.key_averages().table(row_limit=5))\n"


def _guarded(call: str, every: int) -> Callable[[str, dict], str]:
    """The fix of D701/D702: the call (at 8 spaces) made every `every` steps."""

    def edit(source: str, details: dict) -> str:
        n = details.get("suggested_every", every)
        return source.replace(
            f"        {call}", f"        if step % {n} == 0:\n            {call}", 1
        )

    return edit


def _no_profiler(source: str, details: dict) -> str:
    return "import contextlib\n" + source.replace(PROFILER, "with contextlib.nullcontext():")


# name -> (finding code, edit of the source as written (the table of profiled ops is not printed
# by either version: only the profiling is compared), the fix applied to the source)
CASES: dict[str, tuple[str, Callable[[str], str], Callable[[str, dict], str]]] = {
    "d701_checkpoint_every_step": ("D701", lambda s: s, _guarded("torch.save(", 1)),
    "d702_print_every_step": ("D702", lambda s: s, _guarded('print(f"step', 10)),
    "d211_anomaly_detection": (
        "D211",
        lambda s: s,
        lambda s, d: s.replace("set_detect_anomaly(True)", "set_detect_anomaly(False)"),
    ),
    "d212_profiler_left_on": ("D212", lambda s: s.replace(PROFILER_TABLE, ""), _no_profiler),
}


def _time(path: Path) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(path)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=600,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=list(CASES))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"load average: {os.getloadavg()[0]:.1f}")
    header = "script  code  stated (basis)  observed per step: CPU  wall  stated/observed CPU"
    print(header)
    for name in args.names:
        code, as_written, fix = CASES[name]
        report = diagnose_planted(name)  # the script's own prints hidden
        finding = next((f for f in report.findings if f.id == code), None)
        if finding is None:
            print(f"{name}  {code}  not found: {[f.id for f in report.findings]}")
            continue
        source = (SCRIPTS / f"{name}.py").read_text()
        with tempfile.TemporaryDirectory() as tmp:
            original, fixed = Path(tmp, "as_written.py"), Path(tmp, "fixed.py")
            original.write_text(as_written(source))
            fixed.write_text(fix(as_written(source), finding.details))
            assert fixed.read_text() != original.read_text(), name
            times: dict[str, list[dict]] = {"as written": [], "fixed": []}
            for _ in range(args.rounds):  # alternating: a load change hits both alike
                times["as written"].append(_time(original))
                times["fixed"].append(_time(fixed))
        observed = {  # of the mean CPU time and the median wall time per step
            clock: 1
            - statistics.median(t[clock] for t in times["fixed"])
            / statistics.median(t[clock] for t in times["as written"])
            for clock in ("cpu", "wall")
        }
        ratio = finding.saving / observed["cpu"] if observed["cpu"] > 0 else float("inf")
        print(
            f"{name}  {code}  {finding.saving:.0%} ({finding.saving_basis})  "
            f"{observed['cpu']:.0%}  {observed['wall']:.0%}  {ratio:.2f}"
        )
    print(f"load average: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
