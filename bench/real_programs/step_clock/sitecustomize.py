"""A near-zero-cost clock of a program's optimizer steps, for the corpus's overhead column.

run.py puts this folder first on PYTHONPATH with TD_STEP_CLOCK_DIR set, for the plain run and for
the diagnosed run alike, so that both are timed by the same clock. Nothing is imported until the
program itself imports torch.optim: then one global optimizer-step post-hook appends one wall
clock and one process CPU clock reading per step (two calls; ~1 us against steps of 100 us and
more), kept per optimizer. The readings are appended to TD_STEP_CLOCK_DIR/<pid>.steps at most
once a second and at exit (a plain run stopped at its time limit is killed: what it flushed
before still counts), one `optimizer-id wall cpu` line each.
"""

from __future__ import annotations

import atexit
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import time

_OUT = os.environ.get("TD_STEP_CLOCK_DIR")
_WATCHED = "torch.optim.optimizer"
FLUSH_EVERY_S = 1.0
_pending: list[str] = []
_last_flush = [time.perf_counter()]


def _on_step(optimizer, args, kwargs) -> None:  # noqa: ANN001 (torch's hook signature)
    wall = time.perf_counter()
    _pending.append(f"{id(optimizer)} {wall!r} {time.process_time()!r}\n")
    if wall - _last_flush[0] > FLUSH_EVERY_S:
        _flush()
        _last_flush[0] = time.perf_counter()


def _flush() -> None:
    if _pending and _OUT:
        with open(os.path.join(_OUT, f"{os.getpid()}.steps"), "a") as f:
            f.writelines(_pending)
        _pending.clear()


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
    atexit.register(_flush)


def _run_the_rows_own_sitecustomize() -> None:
    """Python imports one `sitecustomize`, the first on the path: this one. A row whose
    stand-ins bring their own (numpy1_names/) has it on PYTHONPATH after this folder: run it
    too, so that the clock does not hide it."""
    here = os.path.dirname(os.path.abspath(__file__))
    for folder in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        path = os.path.join(folder, "sitecustomize.py")
        if folder and os.path.abspath(folder) != here and os.path.isfile(path):
            spec = importlib.util.spec_from_file_location("_row_sitecustomize", path)
            if spec is not None and spec.loader is not None:
                spec.loader.exec_module(importlib.util.module_from_spec(spec))
            return


_run_the_rows_own_sitecustomize()
