"""What a `--try` trial worker costs per training step, compared with the script run plainly.

    .venv/bin/python bench/trial_overhead.py [--rounds 6] [--steps 60] [--before DIR]

A small training script (nested modules, so per-call interception costs show) times its own
steps and appends each to a file. Each round runs it as a plain `python script.py` and as a trial
baseline (`python -m torchdoctor.trials.worker`, no fix) for every source tree given (this
checkout, and with `--before DIR` another tree's `src`, e.g. `git archive <commit> src | tar -x
-C DIR`), in rotating order so load drifts hit every mode alike. Prints the median step time of
each mode and the ratio trial/plain, on the wall clock and on the main thread's CPU time
(steadier on a shared, loaded machine) (median over rounds of the paired ratios). Steps before
`--skip` are warm-up and not compared. One torch thread (OMP_NUM_THREADS=1).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = textwrap.dedent(
    """
    import os, sys, time
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset

    steps = int(sys.argv[1])
    out = open(os.environ["TD_BENCH_TIMES"], "a")
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(4096, 64), torch.randint(0, 10, (4096,)))
    loader = DataLoader(data, batch_size=32, shuffle=True, drop_last=True)
    blocks = [nn.Sequential(nn.Linear(64, 64), nn.LayerNorm(64), nn.ReLU()) for _ in range(8)]
    model = nn.Sequential(*blocks, nn.Linear(64, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    done, last, last_cpu = 0, time.perf_counter(), time.thread_time()
    while done < steps:
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            now, now_cpu = time.perf_counter(), time.thread_time()
            out.write(f"{now - last} {now_cpu - last_cpu}\\n")
            out.flush()
            last, last_cpu, done = now, now_cpu, done + 1
            if done == steps:
                break
    """
)


def step_times(command: list[str], env: dict, times_file: str) -> list[tuple[float, float]]:
    """(wall, main-thread CPU) seconds of each step, as the script timed them."""
    Path(times_file).write_text("")
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    rows = [line.split() for line in Path(times_file).read_text().splitlines()]
    return [(float(wall), float(cpu)) for wall, cpu in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--skip", type=int, default=10, help="warm-up steps not compared")
    parser.add_argument("--before", help="a directory holding another tree's src/torchdoctor")
    args = parser.parse_args()
    trees = {"now": str(ROOT / "src")}
    if args.before:
        trees["before"] = str(Path(args.before) / "src")
    with tempfile.TemporaryDirectory(prefix="td-trial-overhead-") as tmp:
        script = os.path.join(tmp, "train.py")
        Path(script).write_text(SCRIPT)
        times_file = os.path.join(tmp, "times.txt")
        base_env = {**os.environ, "OMP_NUM_THREADS": "1", "TD_BENCH_TIMES": times_file}
        modes: dict[str, tuple[list[str], dict]] = {
            "plain": ([sys.executable, script, str(args.steps)], base_env)
        }
        for name, src in trees.items():
            out = os.path.join(tmp, f"{name}.json")
            worker = [sys.executable, "-m", "torchdoctor.trials.worker", "--out", out]
            command = [*worker, "--steps", str(args.steps + 50), script, str(args.steps)]
            modes[f"trial ({name})"] = (command, {**base_env, "PYTHONPATH": src})
        names = list(modes)
        medians: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
        for round_index in range(args.rounds):
            shift = round_index % len(names)
            for name in names[shift:] + names[:shift]:
                command, env = modes[name]
                times = step_times(command, env, times_file)[args.skip :]
                medians[name].append(
                    (statistics.median(t[0] for t in times), statistics.median(t[1] for t in times))
                )
    print(
        f"script: 8 x (Linear 64 + LayerNorm + ReLU) + Linear, batch 32, SGD; "
        f"{args.rounds} rounds x {args.steps} steps per mode (first {args.skip} skipped)"
    )
    for index, clock in ((0, "wall"), (1, "cpu")):
        plain = [m[index] for m in medians["plain"]]
        print(f"{clock:4s} plain: {1e3 * statistics.median(plain):.3f} ms per step")
        for name in names[1:]:
            mode = [m[index] for m in medians[name]]
            ratio = statistics.median(t / p for t, p in zip(mode, plain))
            print(
                f"{clock:4s} {name}: {1e3 * statistics.median(mode):.3f} ms per step, "
                f"ratio trial/plain {ratio:.3f} (median over rounds of paired round medians)"
            )


if __name__ == "__main__":
    main()
