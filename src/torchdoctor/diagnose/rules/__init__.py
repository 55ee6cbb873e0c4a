"""Diagnose rules: one module per rule, each a pure `check(run: RunObservation) -> list[Finding]`.

A rule module defines `CODE` (stable, e.g. "D101"), `TITLE` (one line), a Ruff-style docstring
(What it does / Why is this bad / Example / Use instead / Fix safety) and `check`. Codes group by
area: D1xx data loading, D2xx compute and precision, D3xx evaluation, D4xx host syncs and
transfers, D5xx memory, D6xx distributed, D7xx I/O, D8xx the program's own lines (the line profile).
Helper modules start with an underscore. `rules_runner.check_all` runs them, each one isolated.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from types import ModuleType


@lru_cache(maxsize=1)
def _discover() -> tuple[ModuleType, ...]:
    modules = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "CODE") and hasattr(module, "check"):
            modules.append(module)
    return tuple(sorted(modules, key=lambda m: m.CODE))


def all_rules() -> list[ModuleType]:
    """The rule modules, sorted by CODE."""
    return list(_discover())
