"""Per-step cost of torchdoctor.Trainer against hand-written loops on the same model and data.

    .venv/bin/python bench/loop_overhead.py [--repeats 9] [--steps 100] [--hidden 512] [--threads 1]

Loops, run alternately (A B C A B C ...) so machine noise hits all of them alike:
  raw-minimal   forward, loss, zero_grad(set_to_none), backward, step; nothing else
  raw-metrics   the same plus what the Trainer reports: loss sum and correct count kept as
                tensors (no per-step .item()), read once per epoch
  trainer       Trainer.fit for one epoch (its own DataLoader, history record, everything)
  lightning     if `lightning` is importable (it is skipped otherwise)
All use a DataLoader over the same TensorDataset, batch size and num_workers=0, so data loading is
identical. Reported per loop, in wall-clock and in process CPU time: median and min over repeats
of (epoch time / steps), and ratios against raw-metrics. Target: trainer within 2% of raw-metrics
on CPU.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from torchdoctor.trainer import Trainer, TrainerConfig


def make_problem(samples: int, features: int, hidden: int, classes: int = 10):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(samples, features, generator=g)
    y = torch.randint(0, classes, (samples,), generator=g)
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(features, hidden),
        nn.ReLU(),
        nn.Linear(hidden, hidden),
        nn.ReLU(),
        nn.Linear(hidden, classes),
    )
    return TensorDataset(x, y), model


def raw_epoch(model, optimizer, loss_fn, loader, metrics: bool) -> None:
    model.train()
    loss_sum = torch.zeros((), dtype=torch.float64)
    correct = torch.zeros((), dtype=torch.int64)
    for x, y in loader:
        out = model(x)
        loss = loss_fn(out, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if metrics:
            loss_sum += loss.detach() * y.shape[0]
            correct += (out.detach().argmax(dim=-1) == y).sum()
    loss_sum.item(), correct.item()


def lightning_epoch_factory(model, dataset, batch_size):
    try:
        import lightning as L  # noqa: N812
    except ImportError:
        return None

    class Module(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = model

        def training_step(self, batch, _):
            x, y = batch
            return nn.functional.cross_entropy(self.net(x), y)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.01)

    module = Module()

    def run(loader):
        trainer = L.Trainer(
            max_epochs=1,
            accelerator="cpu",
            logger=False,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
        )
        trainer.fit(module, loader)

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--steps", type=int, default=100, help="optimizer steps per epoch")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--features", type=int, default=256)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch default)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    dataset, base = make_problem(args.steps * args.batch_size, args.features, args.hidden)
    models = {name: copy.deepcopy(base) for name in ("raw-minimal", "raw-metrics", "trainer")}
    opts = {name: torch.optim.SGD(m.parameters(), lr=0.01) for name, m in models.items()}
    config = TrainerConfig(
        device="cpu", epochs=1, batch_size=args.batch_size, workers=0, quiet=True, precision="fp32"
    )
    loss_fn = nn.CrossEntropyLoss()  # the same loss object for every loop
    trainer = Trainer(models["trainer"], opts["trainer"], loss_fn, config)

    def loader():
        # in-process loading on purpose: the Trainer above runs with workers=0 too
        return DataLoader(dataset, batch_size=args.batch_size, shuffle=True)  # noqa: TD102

    loops = {
        "raw-minimal": lambda: raw_epoch(
            models["raw-minimal"], opts["raw-minimal"], loss_fn, loader(), metrics=False
        ),
        "raw-metrics": lambda: raw_epoch(
            models["raw-metrics"], opts["raw-metrics"], loss_fn, loader(), metrics=True
        ),
        "trainer": lambda: trainer.fit(dataset),
    }
    lightning = lightning_epoch_factory(copy.deepcopy(base), dataset, args.batch_size)
    if lightning is not None:
        loops["lightning"] = lambda: lightning(loader())
    else:
        print("lightning: not installed, skipped")

    for run in loops.values():  # warm-up: allocator, first-call costs
        run()
    wall = {name: [] for name in loops}
    cpu = {name: [] for name in loops}
    for _ in range(args.repeats):
        for name, run in loops.items():
            wall_start, cpu_start = time.perf_counter(), time.process_time()
            run()
            cpu[name].append((time.process_time() - cpu_start) / args.steps)
            wall[name].append((time.perf_counter() - wall_start) / args.steps)

    print(
        f"torch {torch.__version__}, threads {torch.get_num_threads()}, batch {args.batch_size}, "
        f"MLP {args.features}-{args.hidden}-{args.hidden}-10, {args.steps} steps x "
        f"{args.repeats} repeats (alternating)"
    )
    summarize("wall-clock", wall)
    summarize("process CPU time", cpu)


def summarize(clock: str, times: dict[str, list[float]]) -> None:
    """Median: the typical step. Min: the least disturbed one. Paired: the median of per-round
    ratios (a round runs the loops back to back, so a load spike mostly hits all of them). With
    one torch thread and no workers, process CPU time excludes time other processes took from us,
    so on a shared machine it is the steadiest view of the loop's own cost."""
    medians = {name: statistics.median(values) for name, values in times.items()}
    minima = {name: min(values) for name, values in times.items()}
    header = f"{'loop':12s} {'median':>9s} {'min':>9s}   vs raw-metrics: median / min / paired"
    print(f"[{clock}] {header}")
    for name, values in times.items():
        paired = statistics.median(a / b for a, b in zip(values, times["raw-metrics"]))
        print(
            f"[{clock}] {name:12s} {medians[name] * 1e3:7.3f}ms {minima[name] * 1e3:7.3f}ms   "
            f"{medians[name] / medians['raw-metrics']:.3f}x / "
            f"{minima[name] / minima['raw-metrics']:.3f}x / {paired:.3f}x"
        )


if __name__ == "__main__":
    main()
