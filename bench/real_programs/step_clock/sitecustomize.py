"""A near-zero-cost clock of a program's optimizer steps, for the corpus's overhead column.

run.py puts this folder first on PYTHONPATH with TD_STEP_CLOCK_DIR set, for the plain run and for
the diagnosed run alike, so that both are timed by the same clock. Nothing is imported until the
program itself imports torch.optim: then one global optimizer-step post-hook appends one wall
clock and one process CPU clock reading per step (two calls; ~1 us against steps of 100 us and
more), kept per optimizer. At exit the readings go to TD_STEP_CLOCK_DIR/<pid>.json with the
program's argv, so that run.py can tell the program's own process from any other Python process
it or torchdoctor started.
"""

from __future__ import annotations

import atexit
import importlib.abc
import importlib.machinery
import json
import os
import sys
import time

_OUT = os.environ.get("TD_STEP_CLOCK_DIR")
_WATCHED = "torch.optim.optimizer"
_readings: dict[int, list[tuple[float, float]]] = {}


def _on_step(optimizer, args, kwargs) -> None:  # noqa: ANN001 (torch's hook signature)
    _readings.setdefault(id(optimizer), []).append((time.perf_counter(), time.process_time()))


def _dump() -> None:
    steps = [r for r in _readings.values() if len(r) > 1]
    if not steps or not _OUT:
        return
    record = {"pid": os.getpid(), "argv": list(sys.argv), "optimizers": steps}
    path = os.path.join(_OUT, f"{os.getpid()}.json")
    with open(path, "w") as f:
        json.dump(record, f)


class _AfterOptimizerImport(importlib.abc.MetaPathFinder):
    """Registers the hook once torch.optim.optimizer has executed, then steps aside."""

    def find_spec(self, name, path, target=None):  # noqa: ANN001, ANN201
        if name != _WATCHED:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_hook(module) -> None:  # noqa: ANN001
            exec_module(module)
            module.register_optimizer_step_post_hook(_on_step)

        spec.loader.exec_module = exec_then_hook  # type: ignore[method-assign]
        return spec


if _OUT:
    sys.meta_path.insert(0, _AfterOptimizerImport())
    atexit.register(_dump)
