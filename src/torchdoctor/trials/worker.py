"""One trial in a fresh process: run the user's script with some fixes applied, for N steps.

The script runs the way `torchdoctor diagnose` runs it (`diagnose.runner.run_program`: its argv,
`__main__`, sys.path[0], a stop that sticks through a bare `except:`), under a diagnose `Session`
whose step tracker defines the steps (trials.recorder) and whose probes call the fixes' hook
points (only the probes these need: TRIAL_PROBES); `Hooks.install(beside_probes=True)` patches
only the points the probes do not call.

    python -m torchdoctor.trials.worker --out RESULT.json --steps N [--fixes a,b] [--seed S]
        [--observation RUN.json] [--module] TARGET [ARGS...]

Python's, NumPy's and torch's random generators are seeded identically before the script starts,
so a baseline and a variant see the same data order and the same initial weights. The result
file (JSON) holds the per-step records, the peak memory, which fixes applied, and how the run
ended; the user's traceback, if the script raised, goes to stderr as the user's. The files the
script writes are put back as the trial found them (trials.program_files).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from dataclasses import asdict

import torch

from torchdoctor.diagnose.probes import PROBE_TYPES
from torchdoctor.diagnose.runner import run_program
from torchdoctor.diagnose.session import DiagnoseConfig, Session
from torchdoctor.intercept.hooks import Hooks
from torchdoctor.process_memory import peak_rss_bytes
from torchdoctor.program import Program
from torchdoctor.seeding import seed_everything
from torchdoctor.trials.fixes import get_fix
from torchdoctor.trials.program_files import ProgramFiles
from torchdoctor.trials.recorder import StepRecorder
from torchdoctor.trials.rng_probe import LoaderRandomnessProbe

# The probes a trial's steps need: the ones that tell the step tracker where a step ends (the
# optimizer's and backward's, the loader's and a producer queue's fetches, which also time the
# data phase), the ones whose patches call the fixes' hook points (the loader's for
# `loader_kwargs`, the forward's for `around_forward`, the transfer probe's for `tensor_to`), and
# the ones timing the phases the phase clock reads (forward, backward, optimizer, data; CUDA's on
# a GPU). The others (syncs, I/O, tensor creation, memory, habits, ...) observe things a trial
# never reads, and their hooks ran inside every measured step of the baseline and of the variant
# alike: a longer step, of which a fix's saved seconds are a smaller share than in the plain
# program. Most of what a trial's step costs beyond the plain one is in the probes kept
# (multi_profiler_sgd_zero_fill: 1.33x the plain step's CPU time under the whole session,
# 1.28x under these; docs/benchmarks.md, calibration round 15).
TRIAL_PROBES = frozenset(
    {
        "LoaderProbe",
        "QueueWaitProbe",
        "OptimizerProbe",
        "ForwardProbe",
        "BackwardProbe",
        "TransferProbe",
        "CudaPhaseProbe",
    }
)


def trial_config() -> DiagnoseConfig:
    """The session a trial runs under: the step tracker and TRIAL_PROBES only."""
    unused = tuple(t.__name__ for t in PROBE_TYPES if t.__name__ not in TRIAL_PROBES)
    # steps=0: the recorder, not the session, decides when enough steps ran (prefetch included);
    # no line sampler: a trial reads step times, never a line profile, and the sampler's thread
    # would cost the measured steps CPU time
    return DiagnoseConfig(
        steps=0,
        warmup=0,
        stop=False,
        count_ops=False,
        line_profile=False,
        without_probes=unused,
    )


def peak_memory(program_on_cuda: bool) -> tuple[int, str]:
    """The trial's peak: the CUDA allocator's when the program trains on CUDA (CUDA initialised
    in the process is not enough: a CPU program on a GPU machine keeps its tensors in the
    process's memory, and the allocator's peak reads ~0 for them), else the process's."""
    if program_on_cuda and torch.cuda.is_initialized():
        return int(torch.cuda.max_memory_allocated()), "cuda_allocator"
    return peak_rss_bytes(), "process_rss"


def _load_observation(path: str | None):
    if not path:
        return None
    from torchdoctor.trials.observation_io import load_run_observation

    return load_run_observation(path)


def run_trial(options: argparse.Namespace) -> dict:
    hooks = Hooks(
        device_type="cuda" if torch.cuda.is_available() else "cpu",
        observation=_load_observation(options.observation),
    )
    session = Session(trial_config(), hooks)
    recorder = StepRecorder(max_steps=options.steps)
    recorder.attach(hooks, session)
    rng_probe = LoaderRandomnessProbe()
    rng_probe.attach(hooks)
    result = {"fixes": options.fixes, "failed_fixes": {}, "status": "completed", "error": None}
    for name in options.fixes:
        try:
            get_fix(name).apply(hooks)
        except Exception as exc:  # a fix that cannot apply is reported; the others still run
            result["failed_fixes"][name] = f"{type(exc).__name__}: {exc}"
    seed_everything(options.seed)
    hooks.install(beside_probes=True)
    # the program's files as this trial found them, afterwards
    program_files = ProgramFiles(options.program.cwd)
    started = time.perf_counter()
    try:  # the user's traceback, if the script fails, is printed by run_program as the user's
        end = run_program(session, options.program)
    finally:
        hooks.uninstall()
        gc.collect()  # files the stopped program left open are closed (and flushed) first
        program_files.restore()
    if end.status in ("stopped", "completed") and end.exit_code == 0:
        result["status"] = end.status
    elif end.status == "completed":
        result["status"], result["error"] = "crashed", f"script exited with code {end.exit_code}"
    else:
        result["status"], result["error"] = "crashed", end.error or end.status
    result["elapsed_s"] = time.perf_counter() - started
    result["steps"] = [asdict(step) for step in recorder.steps]
    result["prefetch_steps"] = recorder.prefetch_steps
    rng_probe.close()
    result["loader_draws_random"] = rng_probe.drew
    result["dropout_active"] = recorder.dropout_active
    result["used_fixes"] = sorted(hooks.used)
    result["peak_memory_bytes"], result["memory_source"] = peak_memory(recorder.loss_on_cuda)
    result["device_type"] = hooks.device_type
    result["files_not_restored"] = program_files.not_restored
    return result


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m torchdoctor.trials.worker")
    parser.add_argument("--out", required=True)
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fixes", default="")
    parser.add_argument("--observation", default=None)
    parser.add_argument("--module", action="store_true")
    parser.add_argument("target")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    options = parser.parse_args(argv)
    options.fixes = [name for name in options.fixes.split(",") if name]
    options.program = Program(options.target, options.args, options.module)
    return options


def main(argv: list[str] | None = None) -> int:
    options = parse_args(sys.argv[1:] if argv is None else argv)
    result = run_trial(options)
    with open(options.out, "w", encoding="utf-8") as handle:
        json.dump(result, handle)
    gc.collect()  # the stopped script's loader iterators are unreachable now: shut their workers
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: a stopped script may leave non-daemon threads behind.
    os._exit(0)


if __name__ == "__main__":
    main()
