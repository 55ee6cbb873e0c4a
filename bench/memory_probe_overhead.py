"""What the memory probe adds to a diagnosis: the same loop under `torchdoctor.watch()` with all
probes, and with all probes but the memory probe (per-step memory read, weak reference to each
loss, retention checks), in interleaved rounds in one process (bench/_paired.py). Prints the
median step time of each and their paired ratio with its spread, on the wall clock and on the
main thread's CPU time (the one that stays meaningful on a shared machine). Step 0 (activations by module) and the sampled step (per
phase memory) are warm-up steps of every round and are not timed, as in a real diagnosis.

    .venv/bin/python bench/memory_probe_overhead.py [--rounds 12] [--steps 30] [--width 512]
"""

from __future__ import annotations

import argparse
import runpy
import timeit
from pathlib import Path

import torch

import torchdoctor
from _paired import StepTimes, interleaved, print_ratios
from torchdoctor.diagnose import probes
from torchdoctor.diagnose.probes.memory import MemoryTimelineProbe
from torchdoctor.diagnose.probes.memory_reading import MemoryReader

make_loop = runpy.run_path(str(Path(__file__).with_name("diagnose_overhead.py")))["make_loop"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--steps", type=int, default=30, help="timed steps per round")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--width", type=int, default=512)
    args = parser.parse_args()
    torch.set_num_threads(1)
    run = make_loop(args.batch_size, args.width)
    run(10)
    every = probes.PROBE_TYPES
    without = tuple(p for p in every if p is not MemoryTimelineProbe)

    def watched_round(types) -> StepTimes:
        probes.PROBE_TYPES = types
        try:
            with torchdoctor.watch(warmup=args.warmup) as w:
                times = run(args.warmup + args.steps)[args.warmup :]
        finally:
            probes.PROBE_TYPES = every
        assert len(w.report.run.steps) == args.steps
        return times

    rounds = interleaved(
        {"without": lambda: watched_round(without), "with": lambda: watched_round(every)},
        args.rounds,
    )
    print(
        f"loop: MLP 784-{args.width}-{args.width}-10, batch {args.batch_size}, 1 thread, "
        f"{args.rounds} rounds x {args.steps} steps per mode"
    )
    print_ratios(
        "other probes", "with the memory probe", rounds["without"], rounds["with"], indent=""
    )
    reader = MemoryReader()
    read_s = min(timeit.repeat(reader.allocated, number=1000, repeat=5)) / 1000
    reader.close()
    print(f"one step-end memory read ({reader.source}): {1e6 * read_s:.2f} us, best of 5 x 1000")


if __name__ == "__main__":
    main()
