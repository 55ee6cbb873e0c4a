"""Overhead of diagnose's probes on a GPU training step (target: <= 1.02).

For the conv and the transformer step of bench/gpu_workloads.py, interleaved rounds (as
bench/_paired.py runs them) of the plain loop and the same loop under torchdoctor.watch() (the
probes `torchdoctor diagnose` installs). On a GPU a step's host time is only when its work was
issued, so a round is timed as a whole: synchronize, `--steps` steps, synchronize; the round's
step time is the mean. Prints the median over rounds of the per-round ratio watched / plain and
its middle half.

    python3 bench/gpu_overhead.py [--rounds 7] [--steps 60] [--warmup 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

import torchdoctor
from _paired import interleaved
from gpu_workloads import workload


def timed(step, steps: int) -> float:
    torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    return (time.perf_counter() - started) / steps


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--models", default="conv,transformer")
    args = parser.parse_args()
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}")
    for model in args.models.split(","):
        step, description = workload(model)
        for _ in range(10):
            step()

        def plain(step=step) -> float:
            for _ in range(args.warmup):
                step()
            return timed(step, args.steps)

        def watched(step=step) -> float:
            with torchdoctor.watch(warmup=args.warmup, whatif=False):
                for _ in range(args.warmup):
                    step()
                return timed(step, args.steps)

        rounds = interleaved({"plain": plain, "diagnose": watched}, args.rounds)
        ratios = sorted(w / p for p, w in zip(rounds["plain"], rounds["diagnose"]))
        quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
        print(
            f"{model}: plain {1e3 * statistics.median(rounds['plain']):.2f} ms/step, diagnose "
            f"{1e3 * statistics.median(rounds['diagnose']):.2f} ms/step, ratio "
            f"{statistics.median(ratios):.3f} [{quartiles[0]:.3f}-{quartiles[-1]:.3f}] over "
            f"{args.rounds} rounds of {args.steps} steps ({description})"
        )
        del step
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
