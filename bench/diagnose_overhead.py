"""Overhead of `torchdoctor diagnose` on a clean training loop.

Runs the same loop plain and under the probes (torchdoctor.watch(), which installs exactly the
hooks `torchdoctor diagnose` installs), alternating rounds in one process, and prints the median
step time of each and their ratio (target: < 1.05). The sampled step (op and FLOP counting) is a
warm-up step of each watched round and is not timed, as in a real diagnosis.

Two clocks: wall time (what a user waits for) and the main thread's CPU time (what the probes
cost). With one torch thread all the loop's work runs on the main thread, so the CPU-time ratio
stays meaningful on a shared, overloaded machine where wall times swing several-fold. The last
line compares the fastest step of each mode: on a loaded machine, the least disturbed ones.

    .venv/bin/python bench/diagnose_overhead.py [--rounds 20] [--steps 30] [--threads 1]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import torchdoctor


def make_loop(batch_size: int, width: int):
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(4096, 784), torch.randint(0, 10, (4096,)))
    loader = DataLoader(data, batch_size=batch_size, shuffle=True, drop_last=True)
    model = nn.Sequential(
        nn.Linear(784, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 10)
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def run(steps: int) -> list[tuple[float, float]]:
        times: list[tuple[float, float]] = []  # (wall, main-thread CPU) per step
        batches = iter(loader)
        last, last_cpu = time.perf_counter(), time.thread_time()
        for _ in range(steps):
            try:
                x, y = next(batches)
            except StopIteration:
                batches = iter(loader)
                x, y = next(batches)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            now, now_cpu = time.perf_counter(), time.thread_time()
            times.append((now - last, now_cpu - last_cpu))
            last, last_cpu = now, now_cpu
        return times

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--steps", type=int, default=30, help="timed steps per round")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    run = make_loop(args.batch_size, args.width)
    run(10)  # warm the allocator and BLAS before either mode is timed

    def watched_round(line_profile: bool = True) -> list[tuple[float, float]]:
        w = torchdoctor.watch(warmup=args.warmup)
        w.config.line_profile = line_profile  # False: every probe but the line sampler
        with w:
            times = run(args.warmup + args.steps)[args.warmup :]
        assert len(w.report.run.steps) == args.steps, "the probes did not see every step"
        return times

    def plain_round() -> list[tuple[float, float]]:
        return run(args.warmup + args.steps)[args.warmup :]

    pairs = []  # (plain round, watched round), adjacent in time
    sampler_pairs = []  # (watched without the line sampler, watched), adjacent in time
    for round_index in range(args.rounds):  # ABBA order: drifts hit both modes alike
        if round_index % 2 == 0:
            plain = plain_round()
            pairs.append((plain, watched_round()))
            sampler_pairs.append((watched_round(line_profile=False), pairs[-1][1]))
        else:
            watched = watched_round()
            pairs.append((plain_round(), watched))
            sampler_pairs.append((watched_round(line_profile=False), watched))
    print(
        f"loop: MLP 784-{args.width}-{args.width}-10, batch {args.batch_size}, "
        f"{args.threads} thread(s), {args.rounds} rounds x {args.steps} steps per mode"
    )
    for index, clock in ((0, "wall"), (1, "cpu")):
        plain_s = [statistics.median(t[index] for t in p) for p, _ in pairs]
        watched_s = [statistics.median(t[index] for t in w) for _, w in pairs]
        ratio = statistics.median(w / p for p, w in zip(plain_s, watched_s))
        extra = statistics.median(w - p for p, w in zip(plain_s, watched_s))
        print(
            f"{clock:4s}: plain {1000 * statistics.median(plain_s):.3f} ms, "
            f"diagnose {1000 * statistics.median(watched_s):.3f} ms, "
            f"ratio diagnosed/plain {ratio:.3f} (+{1e6 * extra:.0f} us per step); "
            "median over rounds of paired round medians"
        )
    for index, clock in ((0, "wall"), (1, "cpu")):
        ratio = statistics.median(
            statistics.median(t[index] for t in w) / statistics.median(t[index] for t in n)
            for n, w in sampler_pairs
        )
        print(
            f"{clock:4s}: line sampler: ratio diagnosed/diagnosed without the line sampler "
            f"{ratio:.3f} (median over rounds of paired round medians)"
        )
    fastest_plain = min(t[1] for p, _ in pairs for t in p)
    fastest_watched = min(t[1] for _, w in pairs for t in w)
    print(
        f"best: plain {1000 * fastest_plain:.3f} ms, diagnose {1000 * fastest_watched:.3f} ms, "
        f"ratio diagnosed/plain {fastest_watched / fastest_plain:.3f} "
        f"(+{1e6 * (fastest_watched - fastest_plain):.0f} us per step); fastest step of each "
        "mode, CPU time (the least disturbed by other jobs)"
    )


if __name__ == "__main__":
    main()
