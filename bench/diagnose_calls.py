"""Python calls the probes add per steady training step: a count, the same at any machine load.

For each row of bench/diagnose_overhead.py it runs the loop's steps under `sys.setprofile` (the
main thread: the line sampler's thread is not counted) plain and watched (the hooks `torchdoctor
diagnose` installs, the line sampler included), after enough steps that the warm-up, the sampled
step and step 0's activation counting are over, and prints the calls per step of the watched loop
minus the plain one: Python function calls and calls of C functions (builtins, torch's C
methods), and which of them run torchdoctor's code. `--per-probe` also runs the watched loop with
each probe left out in turn (`DiagnoseConfig.without_probes`) and prints what each one adds;
`--top N` names the functions whose calls the probes add most. It also counts the garbage
collector's runs per step (gen0/gen1/gen2, plain and watched): objects the probes allocate and
keep make collections more frequent, a cost `sys.setprofile` does not see, and how many objects
the collector tracks the steps left behind (each brings the next collection nearer; a full one
goes through every object of the process, torch's included).

`--opcodes` counts the bytecode instructions the interpreter runs per step instead (`sys.settrace`
with opcode events, the main thread): the probes' cost is interpreter time (round 9: `perf` put
+426 of the +566 us a diagnosed MLP step costs in libpython, none in torch's kernels, libc or the
kernel), and a call is not a unit of it (a call of ours runs 10 to 500 instructions), so this is
the load-independent count that follows the time. `--top N` then names the functions of ours that
run the most.

    .venv/bin/python bench/diagnose_calls.py [--steps 32] [--loops mlp,...] [--per-probe] [--top 15]
        [--opcodes] [--gc-steps N]

`--gc-steps N` times the garbage collector itself over N steady steps, plain and watched: its
runs by generation and the training thread's CPU time in them (full collections are rare and
long, so they show in a long run's total, not in a median step).
"""

from __future__ import annotations

import argparse
import collections
import gc
import os
import sys
import time

import torch

import torchdoctor
from diagnose_overhead import DESCRIPTIONS, LOOPS
from torchdoctor.diagnose.probes import PROBE_TYPES

WARM_STEPS = 12  # past warm-up (3), the sampled step, step 0's counting and the 4th/8th checks
_OURS = os.path.dirname(torchdoctor.__file__)


class CallCount:
    """`sys.setprofile` counts of one stretch of steps: Python calls, C calls, and per function."""

    def __init__(self) -> None:
        self.python = 0
        self.c = 0
        self.ours = 0  # Python calls of torchdoctor's code
        self.functions: collections.Counter = collections.Counter()
        self.collections = [0, 0, 0]  # garbage collections per generation
        # objects the collector tracks that the steps left behind: each makes its collections,
        # full ones too (which go through every object of the process), come sooner
        self.kept = 0

    def _profile(self, frame, event, arg) -> None:
        if event == "call":
            self.python += 1
            code = frame.f_code
            if code.co_filename.startswith(_OURS):
                self.ours += 1
            self.functions[_named(code)] += 1
        elif event == "c_call":
            self.c += 1
            self.functions[f"C {getattr(arg, '__qualname__', arg)} in {_named(frame.f_code)}"] += 1

    def run(self, steps) -> CallCount:
        gc.collect()
        objects = len(gc.get_objects())
        before = [stats["collections"] for stats in gc.get_stats()]
        _under(sys.setprofile, self._profile, steps)
        after = [stats["collections"] for stats in gc.get_stats()]
        self.collections = [b - a for a, b in zip(before, after, strict=True)]
        gc.collect()
        self.kept = len(gc.get_objects()) - objects
        return self


class OpcodeCount:
    """`sys.settrace` counts of one stretch of steps: bytecode instructions run, all and ours
    (torchdoctor's code), and ours per function."""

    def __init__(self) -> None:
        self.total = 0
        self.ours = 0
        self.functions: collections.Counter = collections.Counter()

    def _trace(self, frame, event, arg):
        if event == "opcode":
            self.total += 1
            if frame.f_code.co_filename.startswith(_OURS):
                self.ours += 1
                self.functions[_named(frame.f_code)] += 1
        elif event == "call":
            frame.f_trace_opcodes = True
            frame.f_trace_lines = False
        return self._trace

    def run(self, steps) -> OpcodeCount:
        _under(sys.settrace, self._trace, steps)
        return self


def _named(code) -> str:
    return f"{os.path.basename(code.co_filename)}:{code.co_name}"


def _under(install, hook, steps) -> None:
    """Run `steps` with `hook` installed by `install` (sys.setprofile or sys.settrace)."""
    install(hook)
    try:
        steps()
    finally:
        install(None)


def count(run, steps: int, without: tuple[str, ...] | None = None, counter=CallCount):
    """Calls (or opcodes: `counter`) over `steps` steady steps; `without` None: plain, else
    watched without those probes."""
    if without is None:
        run(WARM_STEPS)
        return counter().run(lambda: run(steps))
    w = torchdoctor.watch(warmup=3, whatif=False)
    w.config.without_probes = without
    with w:
        run(WARM_STEPS)
        counted = counter().run(lambda: run(steps))
    return counted


def report_opcodes(name: str, run, args) -> None:
    plain = count(run, args.steps, counter=OpcodeCount)
    watched = count(run, args.steps, (), counter=OpcodeCount)
    print(
        f"{name}: bytecode instructions per step: plain {plain.total / args.steps:.0f}, "
        f"diagnose {watched.total / args.steps:.0f} (+{(watched.total - plain.total) / args.steps:.0f}"
        f", {watched.ours / args.steps:.0f} in torchdoctor's code); {args.steps} steady steps"
    )
    for function, opcodes in watched.functions.most_common(args.top):
        print(f"    {opcodes / args.steps:7.1f}  {function}")


class CollectorTime:
    """The garbage collector's runs and the training thread's CPU time in them (gc.callbacks),
    by generation, over a stretch of steps."""

    def __init__(self) -> None:
        self.runs = [0, 0, 0]
        self.seconds = [0.0, 0.0, 0.0]
        self._started = 0.0

    def _callback(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.thread_time()
        else:
            self.runs[info["generation"]] += 1
            self.seconds[info["generation"]] += time.thread_time() - self._started

    def run(self, steps) -> CollectorTime:
        gc.callbacks.append(self._callback)
        try:
            steps()
        finally:
            gc.callbacks.remove(self._callback)
        return self

    def describe(self, steps: int) -> str:
        runs = "/".join(str(n) for n in self.runs)
        ms = "/".join(f"{1000 * s:.0f}" for s in self.seconds)
        return (
            f"{runs} runs (gen0/gen1/gen2), {ms} ms; "
            f"{1e6 * sum(self.seconds) / steps:.0f} us a step"
        )


def report_collector(name: str, run, args) -> None:
    """--gc-steps N: the collector's runs and time over N steady steps, plain and watched (the
    watched run measures them all: a long diagnosis, where what the probes keep adds up)."""
    steps = args.gc_steps
    run(WARM_STEPS)
    plain = CollectorTime().run(lambda: run(steps))
    w = torchdoctor.watch(warmup=3, steps=WARM_STEPS + steps, whatif=False)
    with w:
        run(WARM_STEPS)
        watched = CollectorTime().run(lambda: run(steps))
    print(f"{name}: the garbage collector over {steps} steady steps")
    print(f"  plain:    {plain.describe(steps)}")
    print(f"  diagnose: {watched.describe(steps)}")


def per_step(watched: CallCount, plain: CallCount, steps: int) -> str:
    return (
        f"{(watched.python - plain.python) / steps:7.1f} Python calls "
        f"({(watched.ours - plain.ours) / steps:.1f} of torchdoctor's code), "
        f"{(watched.c - plain.c) / steps:7.1f} C calls per step"
    )


def _per_step_collections(counted: CallCount, steps: int) -> str:
    return "/".join(f"{n / steps:.3f}" for n in counted.collections)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=32, help="counted steps")
    parser.add_argument("--loops", default=",".join(LOOPS), help="rows, comma-separated")
    parser.add_argument("--per-probe", action="store_true", help="each probe left out in turn")
    parser.add_argument("--top", type=int, default=0, help="name the N functions added most")
    parser.add_argument("--batch-size", type=int, default=128, help="mlp row")
    parser.add_argument("--width", type=int, default=512, help="mlp row")
    parser.add_argument(
        "--opcodes", action="store_true", help="bytecode instructions per step, not calls"
    )
    parser.add_argument(
        "--gc-steps",
        type=int,
        default=0,
        help="the garbage collector's runs and CPU time over this many steps, plain and watched",
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    for name in args.loops.split(","):
        if name not in LOOPS:
            parser.error(f"unknown loop {name!r}; choose from {', '.join(LOOPS)}")
        run = LOOPS[name](args)
        if args.opcodes:
            report_opcodes(name, run, args)
            continue
        if args.gc_steps:
            report_collector(name, run, args)
            continue
        plain = count(run, args.steps)
        watched = count(run, args.steps, ())
        description = DESCRIPTIONS[name].format(width=args.width, batch_size=args.batch_size)
        print(f"{name}: {description}; {args.steps} steady steps counted")
        print(f"  diagnose - plain: {per_step(watched, plain, args.steps)}")
        print(
            "  garbage collections per step, gen0/gen1/gen2: plain "
            f"{_per_step_collections(plain, args.steps)}, "
            f"diagnose {_per_step_collections(watched, args.steps)}"
        )
        print(
            "  objects the garbage collector tracks, kept per step: plain "
            f"{plain.kept / args.steps:.1f}, diagnose {watched.kept / args.steps:.1f}"
        )
        if args.top:
            added = watched.functions - plain.functions
            for function, calls in added.most_common(args.top):
                print(f"    {calls / args.steps:7.1f}  {function}")
        if args.per_probe:
            print("  each probe (diagnose - diagnose without it):")
            for probe_type in PROBE_TYPES:
                without = count(run, args.steps, (probe_type.__name__,))
                print(f"    {probe_type.__name__:22s} {per_step(watched, without, args.steps)}")


if __name__ == "__main__":
    main()
