"""Compute what-ifs vs the fix applied by hand: is a stated *measured* D201 / D202 saving what the
whole training step gains?

For each planted script, runs `diagnose` (what-if probes on, 1 s budget) and reads the stated
saving of its finding; then times the script's own training step as written and with the fix applied by hand
(float32 data and model for D201; the batch the finding names for D202), in interleaved rounds in
this process, on the process CPU clock and the wall clock, and prints the saving per sample each
clock measured next to the stated one. The D202 fix changes the training, so `--try` has no trial
for it: this is its only check against the whole step.

    OMP_NUM_THREADS=1 .venv/bin/python bench/compute_whatif.py [--rounds 30]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from _planted import diagnose_planted


def float64_regression(dtype: torch.dtype) -> Callable[[], int]:
    """d201_float64.py's step, in `dtype`; returns the samples it trained on."""
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.standard_normal((4096, 256))).to(dtype)
    y = x[:, :8].sum(dim=1, keepdim=True)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 1)).to(dtype)  # fmt: skip
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)

    def step() -> int:
        idx = torch.randint(0, len(x), (256,))
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x[idx]), y[idx])
        loss.backward()
        optimizer.step()
        loss.item()
        return 256

    return step


def tiny_batch_regression(batch: int) -> Callable[[], int]:
    """d202_batch_too_small.py's step at `batch` samples."""
    torch.manual_seed(0)
    features = torch.randn(1024, 32)
    target = features @ torch.randn(32, 1)
    model = nn.Sequential(nn.Linear(32, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(),
                          nn.Linear(64, 1))  # fmt: skip
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step() -> int:
        idx = torch.randint(0, len(features), (batch,))
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(features[idx]), target[idx])
        loss.backward()
        optimizer.step()
        return batch

    return step


def per_sample_saving(as_run, fixed, rounds: int, steps: int = 20) -> dict[str, float]:
    """1 - (time per sample with the fix) / (as written), per clock, medians of interleaved
    rounds of `steps` steps each."""
    clocks = {"cpu": time.process_time, "wall": time.perf_counter}
    per_sample: dict[str, dict[str, list[float]]] = {c: {"as": [], "fix": []} for c in clocks}
    for _ in range(rounds):
        for name, step in (("as", as_run), ("fix", fixed)):
            start = {c: clock() for c, clock in clocks.items()}
            samples = sum(step() for _ in range(steps))
            for c, clock in clocks.items():
                per_sample[c][name].append((clock() - start[c]) / samples)
    return {
        c: 1 - statistics.median(v["fix"]) / statistics.median(v["as"])
        for c, v in per_sample.items()
    }


def stated(script: str, code: str):
    # the default run (a whole cycle), but a 1 s what-if budget: these planted scripts stop after
    # 20 steps of a few ms, so 10% of their diagnosed time in this warm process is ~0.1 s, while
    # the CLI's (interpreter and torch start-up counted) and a real program's are larger
    report = diagnose_planted(script, steps=None, whatif_budget_s=1.0)
    return next((f for f in report.findings if f.id == code), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print("| script | finding | stated (basis) | fix timed | CPU saving | wall saving | "
          "stated/CPU |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    d201 = stated("d201_float64", "D201")
    d202 = stated("d202_batch_too_small", "D202")
    factor = d202.details.get("batch_factor", 4) if d202 else 4
    cases = [
        ("d201_float64", "D201", d201, "float32",
         float64_regression(torch.float64), float64_regression(torch.float32)),
        ("d202_batch_too_small", "D202", d202, f"batch {2 * factor}",
         tiny_batch_regression(2), tiny_batch_regression(2 * factor)),
    ]  # fmt: skip
    for script, code, finding, fix, as_run, fixed in cases:
        measured = per_sample_saving(as_run, fixed, args.rounds)
        said = f"{finding.saving:.0%} ({finding.saving_basis})" if finding else "not reported"
        ratio = f"{finding.saving / measured['cpu']:.2f}" if finding and measured["cpu"] else "-"
        print(f"| {script} | {code} | {said} | {fix} | {measured['cpu']:.0%} | "
              f"{measured['wall']:.0%} | {ratio} |")  # fmt: skip


if __name__ == "__main__":
    main()
