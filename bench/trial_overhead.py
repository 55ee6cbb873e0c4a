"""What a `--try` trial worker costs per training step, compared with the script run plainly.

    .venv/bin/python bench/trial_overhead.py [--rounds 6] [--steps 60] [--before DIR]

A small training script (nested modules, so per-call interception costs show) times its own
steps and appends each to a file. Each round runs it as a plain `python script.py` and as a trial
baseline (`python -m torchdoctor.trials.worker`, no fix) for every source tree given (this
checkout, and with `--before DIR` another tree's `src`, e.g. `git archive <commit> src | tar -x
-C DIR`), in interleaved order so load drifts hit every mode alike. Prints the median step time of
each mode and the ratio trial/plain, on the wall clock and on the main thread's CPU time
(steadier on a shared, loaded machine): the median over rounds of the paired ratios, with
their spread (bench/_paired.py). Steps before
`--skip` are warm-up and not compared. One torch thread (OMP_NUM_THREADS=1).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from _paired import interleaved, print_ratios

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


def _runner(command: list[str], env: dict, times_file: str, skip: int):
    return lambda: step_times(command, env, times_file)[skip:]


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
        rounds = interleaved(
            {
                name: _runner(command, env, times_file, args.skip)
                for name, (command, env) in modes.items()
            },
            args.rounds,
        )
    print(
        f"script: 8 x (Linear 64 + LayerNorm + ReLU) + Linear, batch 32, SGD; "
        f"{args.rounds} rounds x {args.steps} steps per mode (first {args.skip} skipped)"
    )
    for name in list(rounds)[1:]:
        print(f"{name}:")
        print_ratios("plain", "trial", rounds["plain"], rounds[name])


if __name__ == "__main__":
    main()
