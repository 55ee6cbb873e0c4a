"""`torchdoctor demo`: the naive loop, its diagnosis, the treated loop step by step, the table."""

from __future__ import annotations

import os
import platform
from typing import Any

import torch

import torchdoctor
from torchdoctor.console import make_console, progress_enabled
from torchdoctor.demo.diagnosis import diagnose_naive, unavailable
from torchdoctor.demo.meters import memory_kind
from torchdoctor.demo.rows import RowResult, run_rows, warm_up
from torchdoctor.demo.stack import plan
from torchdoctor.demo.table import (
    add_speedups,
    caveats,
    footnotes,
    render_table,
    write_json,
)
from torchdoctor.demo.workload import prepare
from torchdoctor.errors import UsageError
from torchdoctor.outputs import check_writable


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise UsageError(f"--device {name}: CUDA is not available on this machine")
    try:
        return torch.device(name)
    except RuntimeError as exc:
        raise UsageError(f"unknown device {name!r}") from exc


def demo_threads(threads: int | None, device: torch.device) -> int | None:
    """Intra-op threads for the whole demo; None: leave PyTorch's choice.

    On CPU the default is one thread unless OMP_NUM_THREADS says otherwise: the rows compare
    techniques, not thread counts, and on a small shared machine two intra-op threads wait on
    each other's scheduling (measured on 2 loaded cores: naive epochs 9-30 s with 2 threads,
    0.6-1.3 s with 1), which would drown every row's difference. It also leaves a core to the
    DataLoader workers of the workers row.
    """
    if threads is not None:
        if threads < 1:
            raise UsageError(f"--threads {threads}: needs at least 1")
        return threads
    if device.type == "cpu" and not os.environ.get("OMP_NUM_THREADS"):
        return 1
    return None


def run_demo(
    recipe: str = "shapes",
    *,
    quick: bool = False,
    json_path: str | None = None,
    quiet: bool = False,
    diagnose: bool = True,
    diagnose_steps: int | None = None,
    device: str = "auto",
    seed: int = 0,
    cache_dir: str | None = None,
    threads: int | None = None,
) -> list[RowResult]:
    dev = resolve_device(device)
    threads = demo_threads(threads, dev)
    if threads is not None:
        torch.set_num_threads(threads)  # every row, the diagnosis and the warm-up alike
    if json_path:
        check_writable(json_path)
    log = make_console(quiet)
    log.print(
        f"torchdoctor demo: recipe {recipe} on {dev}"
        f" ({'quick' if quick else 'full'} size), torch {torch.__version__}, "
        f"{torch.get_num_threads()} intra-op thread(s)",
        markup=False,
    )

    log.print(
        "\n[1/3] the naive loop (seed 001 as written): python -m torchdoctor.demo.naive_loop",
        markup=False,
    )
    workload = prepare(recipe, quick, seed=seed, cache_dir=cache_dir)
    log.print(
        f"      {workload.n_train} training and {len(workload.naive_data['test'])} "
        f"validation images, {workload.size.epochs} epoch(s) per row",
        markup=False,
    )

    log.print("\n[2/3] what torchdoctor diagnose finds in it", markup=False)
    diagnosis = (
        diagnose_naive(workload, diagnose_steps, log)
        if diagnose
        else unavailable("skipped (--no-diagnose)")
    )

    from torchdoctor.trainer.setup import has_conv

    ranking = [finding["id"] for finding in diagnosis["findings"]]
    steps = plan(dev.type, has_conv(workload.new_model()), ranking)
    order = "in the order of the findings above" if ranking else "in the default order"
    log.print(
        f"\n[3/3] the fixes {order}, one per row ({len(steps)} rows, interleaved epoch by epoch)",
        markup=False,
    )
    warm_up(workload, dev)
    rows = _run_rows(workload, steps, dev, quiet, log)
    add_speedups(rows)

    out = make_console()
    out.print()
    out.print(
        render_table(
            rows,
            f"torchdoctor demo: {recipe} on {dev}, "
            f"{workload.size.epochs} epoch(s) of {workload.n_train} samples",
        )
    )
    from torchdoctor.cores import usable_cores

    for note in footnotes(rows) + caveats(rows, quick, usable_cores()):
        out.print(note, markup=False)
    if json_path:
        write_json(json_path, _header(recipe, dev, workload, diagnosis), rows)
        log.print(f"wrote {json_path}", markup=False)
    return rows


def _run_rows(workload, steps, device, quiet: bool, log) -> list[RowResult]:
    """All rows, interleaved epoch by epoch; progress per epoch of each row."""
    epochs = workload.size.epochs
    if not progress_enabled(quiet):
        latest: dict[int, float] = {}

        def report(index, baton):
            if baton.times:
                latest[index] = baton.times[-1]
            if index == len(steps) - 1:
                log.print(
                    f"      epoch {len(baton.times)}/{epochs}, s per row: "
                    + " ".join(f"{latest[i]:.2f}" for i in sorted(latest)),
                    markup=False,
                )

        return run_rows(workload, steps, device, on_turn=report)
    from rich.progress import Progress

    with Progress(console=make_console(quiet, stderr=True), transient=True) as progress:
        task = progress.add_task(
            f"{len(steps)} rows x {epochs} epochs, interleaved", total=len(steps) * epochs
        )
        return run_rows(
            workload, steps, device, on_turn=lambda index, baton: progress.advance(task)
        )


def _header(recipe: str, device: torch.device, workload, diagnosis: dict) -> dict[str, Any]:
    from torchdoctor.cores import usable_cores

    return {
        "tool": "torchdoctor demo",
        "version": torchdoctor.__version__,
        "recipe": recipe,
        "device": str(device),
        "device_name": torch.cuda.get_device_name(device)
        if device.type == "cuda"
        else platform.processor() or platform.machine(),
        "torch": torch.__version__,
        "cores": usable_cores(),
        "intra_op_threads": torch.get_num_threads(),
        "epochs": workload.size.epochs,
        "train_samples_per_epoch": workload.n_train,
        "val_samples": len(workload.naive_data["test"]),
        "memory_kind": memory_kind(device),
        "diagnosis": diagnosis,
    }
