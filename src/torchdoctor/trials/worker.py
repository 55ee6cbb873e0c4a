"""One trial in a fresh process: run the user's script with some fixes applied, for N steps.

    python -m torchdoctor.trials.worker --out RESULT.json --steps N [--fixes a,b] [--seed S]
        [--observation RUN.json] [--module] TARGET [ARGS...]

Python's, NumPy's and torch's random generators are seeded identically before the script starts,
so a baseline and a variant see the same data order and the same initial weights. The result
file (JSON) holds the per-step records, the peak memory, which fixes applied, and how the run
ended; the user's traceback, if the script raised, goes to stderr as the user's.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import resource
import runpy
import sys
import time
import traceback
from dataclasses import asdict

import torch

from torchdoctor.program import Program
from torchdoctor.trials.fixes import get_fix
from torchdoctor.trials.hooks import TrialHooks
from torchdoctor.trials.recorder import StepRecorder, StopTrial
from torchdoctor.trials.rng_probe import LoaderRandomnessProbe


def seed_everything(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)
    try:
        import numpy

        numpy.random.seed(seed)
    except ImportError:  # numpy is optional for user scripts
        pass


def peak_memory() -> tuple[int, str]:
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        return int(torch.cuda.max_memory_allocated()), "cuda_allocator"
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024, "process_rss"


def _load_observation(path: str | None):
    if not path:
        return None
    from torchdoctor.trials.observation_io import load_run_observation

    return load_run_observation(path)


def _run_target(program: Program) -> None:
    sys.argv = [program.target, *program.argv]
    if program.module:
        runpy.run_module(program.target, run_name="__main__", alter_sys=True)
    else:
        sys.path.insert(0, os.path.dirname(program.path))
        runpy.run_path(program.target, run_name="__main__")


def run_trial(options: argparse.Namespace) -> dict:
    hooks = TrialHooks(
        device_type="cuda" if torch.cuda.is_available() else "cpu",
        observation=_load_observation(options.observation),
    )
    recorder = StepRecorder(max_steps=options.steps)
    recorder.attach(hooks)
    rng_probe = LoaderRandomnessProbe()
    rng_probe.attach(hooks)
    result = {"fixes": options.fixes, "failed_fixes": {}, "status": "completed", "error": None}
    for name in options.fixes:
        try:
            get_fix(name).apply(hooks)
        except Exception as exc:  # a fix that cannot apply is reported; the others still run
            result["failed_fixes"][name] = f"{type(exc).__name__}: {exc}"
    seed_everything(options.seed)
    hooks.install()
    started = time.perf_counter()
    try:
        _run_target(options.program)
    except StopTrial:
        result["status"] = "stopped"
    except SystemExit as exc:
        if exc.code not in (None, 0):
            result["status"], result["error"] = "crashed", f"script exited with code {exc.code}"
    except BaseException as exc:  # the user's script failed: its traceback is the user's
        traceback.print_exc()
        result["status"] = "crashed"
        result["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0]
    finally:
        hooks.uninstall()
    result["elapsed_s"] = time.perf_counter() - started
    result["steps"] = [asdict(step) for step in recorder.steps]
    result["prefetch_steps"] = recorder.prefetch_steps
    result["loader_draws_random"] = rng_probe.drew
    result["dropout_active"] = recorder.dropout_active
    result["used_fixes"] = sorted(hooks.used)
    result["peak_memory_bytes"], result["memory_source"] = peak_memory()
    result["device_type"] = hooks.device_type
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
