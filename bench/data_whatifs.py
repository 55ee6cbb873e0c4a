"""Data what-ifs against the program itself: each planted data script's stated saving (diagnose,
what-if probes on) next to the saving of its fix measured on the whole program, plain vs fixed,
in interleaved rounds (wall time of `main()`, since loader workers' CPU is not the training
process's). The fix is applied by a DataLoader subclass put in the script's namespace:

    D101: num_workers = usable cores (as `--try workers`), persistent_workers=True
    D103: persistent_workers=True
    D108: a BatchSampler over the program's sampler passed as sampler, batch_size=None
    D111: the program's collate_fn replaced by default_collate with one pad_sequence (padding 0)

    OMP_NUM_THREADS=1 .venv/bin/python bench/data_whatifs.py [--rounds 3] [NAME ...]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import statistics
import time
from typing import Any

import torch
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, SequentialSampler

from _planted import SCRIPTS, diagnose_planted
from torchdoctor.diagnose.whatif.collate import padded_collate
from torchdoctor.intercept.hooks import usable_cores

CASES = (  # (script, the finding whose fix is applied)
    ("d101_main_process_loading", "D101"),
    ("d105_expensive_getitem", "D101"),
    ("d111_slow_collate", "D101"),
    ("d111_slow_collate", "D111"),
    ("whatif_workers_beside_long_optimizer", "D101"),
    ("d103_workers_respawned", "D103"),
    ("d108_tensordataset_fetch", "D108"),
)


def fixed_kwargs(code: str, dataset: Any, kwargs: dict) -> dict:
    if code == "D101":
        return {**kwargs, "num_workers": min(8, usable_cores()), "persistent_workers": True}
    if code == "D103":
        return {**kwargs, "persistent_workers": True}
    if code == "D111":  # the whole-batch collate the what-if found to return the same batches
        return {**kwargs, "collate_fn": padded_collate}
    order = RandomSampler(dataset) if kwargs.pop("shuffle", False) else SequentialSampler(dataset)
    batch = kwargs.pop("batch_size", 1)
    return {**kwargs, "sampler": BatchSampler(order, batch, drop_last=False), "batch_size": None}


def loader_class(code: str | None) -> type[DataLoader]:
    class Fixed(DataLoader):
        def __init__(self, dataset, batch_size=1, *args, **kwargs):
            if code is not None and not args:
                kwargs = fixed_kwargs(code, dataset, {"batch_size": batch_size, **kwargs})
                super().__init__(dataset, **kwargs)
            else:
                super().__init__(dataset, batch_size, *args, **kwargs)

    return Fixed


def run_main(name: str, code: str | None) -> float:
    """Wall seconds of the script's main() with the fix (code) or as written (None)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    original = torch.utils.data.DataLoader
    loader = loader_class(code)
    module.DataLoader = loader
    torch.utils.data.DataLoader = loader  # type: ignore[misc]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            start = time.perf_counter()
            module.main()
            return time.perf_counter() - start
    finally:
        torch.utils.data.DataLoader = original  # type: ignore[misc]


def stated(name: str, code: str) -> tuple[float, str]:
    report = diagnose_planted(name, steps=None, warmup=3)
    finding = next((f for f in report.findings if f.id == code), None)
    return (finding.saving, finding.saving_basis) if finding else (0.0, "not reported")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=sorted({name for name, _ in CASES}))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print("| script | finding | stated (basis) | fix measured on the program | stated/measured |")
    print("|---|---|---|---|---|")
    for name, code in [(name, code) for name, code in CASES if name in args.names]:
        saving, basis = stated(name, code)
        ratios = []
        for _ in range(args.rounds):  # interleaved: a load change hits both sides alike
            plain = run_main(name, None)
            ratios.append(run_main(name, code) / plain)
        measured = 1 - statistics.median(ratios)
        spread = f"{min(ratios):.2f}-{max(ratios):.2f}x"
        versus = f"{saving / measured:.2f}" if saving > 0 and measured > 0 else "-"
        print(
            f"| {name} | {code} | {saving:.0%} ({basis}) | {measured:.0%} "
            f"(time ratio {spread}) | {versus} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
