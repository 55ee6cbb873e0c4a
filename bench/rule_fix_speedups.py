"""Side-by-side timings behind two diagnose rules' saving estimates (docs/diagnose-rules.md).

    .venv/bin/python bench/rule_fix_speedups.py [--repeats 30] [--threads 1]

D210 (optimizer not fused): AdamW's step in the default per-tensor loop against foreach=True and
fused=True, on a wide image MLP (0.8M parameters in 4 tensors) and a deep narrow one (7 layers of
256), all with the same random gradients. D108 (per-sample fetch): one epoch of a TensorDataset
through the default DataLoader against a BatchSampler with batch_size=None. Variants run
alternately so machine noise hits them alike; medians are printed with ratios to the first one.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch import nn
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, TensorDataset


def mlp(sizes: list[int]) -> nn.Module:
    layers: list[nn.Module] = []
    for a, b in zip(sizes, sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    model = nn.Sequential(*layers)
    for p in model.parameters():
        p.grad = torch.randn_like(p)
    return model


def time_alternately(variants: dict, repeats: int) -> dict[str, float]:
    for run in variants.values():  # warm up: first-call costs, optimizer state allocation
        run()
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(repeats):
        for name, run in variants.items():
            started = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - started)
    return {name: statistics.median(t) for name, t in times.items()}


def report(title: str, medians: dict[str, float]) -> None:
    base = next(iter(medians.values()))
    print(title)
    for name, seconds in medians.items():
        print(f"  {name:<28} {seconds * 1e3:8.3f} ms   x{base / seconds:5.1f} vs first")


def optimizer_variants(model: nn.Module) -> dict:
    variants = {}
    for label, kwargs in (
        ("AdamW default", {}),
        ("AdamW foreach=True", {"foreach": True}),
        ("AdamW fused=True", {"fused": True}),
    ):
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, **kwargs)
        variants[label] = optimizer.step
    return variants


def loader_variants(n: int = 20000, batch: int = 256) -> dict:
    dataset = TensorDataset(torch.randn(n, 64), torch.randint(0, 2, (n,)))
    per_sample = DataLoader(dataset, batch_size=batch, shuffle=True)
    sampler = BatchSampler(RandomSampler(dataset), batch_size=batch, drop_last=False)
    batched = DataLoader(dataset, sampler=sampler, batch_size=None)
    return {
        "per-sample fetch + collate": lambda: sum(1 for _ in per_sample),
        "BatchSampler, batch_size=None": lambda: sum(1 for _ in batched),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {args.threads} thread(s), median of {args.repeats}")
    report(
        "D210, wide MLP 12288-64-10 (optimizer.step):",
        time_alternately(optimizer_variants(mlp([12288, 64, 10])), args.repeats),
    )
    report(
        "D210, deep MLP 7 x 256 (optimizer.step):",
        time_alternately(optimizer_variants(mlp([256] * 7 + [10])), args.repeats),
    )
    report(
        "D108, one epoch of 20000 samples, batch 256:",
        time_alternately(loader_variants(), max(3, args.repeats // 10)),
    )


if __name__ == "__main__":
    main()
