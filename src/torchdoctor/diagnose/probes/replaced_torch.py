"""Torch functions and Tensor methods replaced after torchdoctor was imported (by the program's
own wrappers, or by our patches), each with the function it replaced.

Why a function mode needs them: under a `TorchFunctionMode`, torch relays every call to the mode
through `handle_torch_function(func, ...)`, and `func` is looked up BY NAME at call time (
`Tensor.backward` in torch/_tensor.py, `getattr(torch.Tensor, "sum")` for a C method, the module
global `relu` in torch.nn.functional). When the program replaced that name with a wrapper of its
own (a counter, a log line) that calls the original, the relay hands the mode the wrapper, and a
mode that calls `func` runs the wrapper a second time: side effects the plain run never had.
The mode calls the replaced original instead (`RelayedCalls.original`), which is what the plain
run executes at that point.
"""

from __future__ import annotations

import sys
from typing import Any

import torch

_MISSING = object()


def _relay_namespaces() -> list[Any]:
    """Where torch's relays look the function up: the Tensor class (its Python and C methods),
    the C function tables of torch's namespaces, and the modules whose Python functions relay
    through their own globals. Only modules already imported (a snapshot never imports)."""
    spaces: list[Any] = [torch.Tensor]
    # (torch._C._VariableFunctions, where torch.add's relay looks, has no __dict__: it cannot be
    # replaced)
    for name in ("_nn", "_linalg", "_fft", "_special", "_nested", "_sparse"):
        table = getattr(torch._C, name, None)
        if hasattr(table, "__dict__"):
            spaces.append(table)
    for module in (
        "torch",
        "torch.functional",
        "torch.nn.functional",
        "torch.nn.init",
        "torch.autograd",
        "torch._lowrank",
        "torch._lobpcg",
    ):
        if module in sys.modules:
            spaces.append(sys.modules[module])
    return spaces


def _entries(space: Any) -> dict[str, Any]:
    return dict(space.__dict__)


# Taken when this module is imported: before the program runs (and before our patches)
_BEFORE: list[tuple[Any, dict[str, Any]]] = [(s, _entries(s)) for s in _relay_namespaces()]


def _resolve(space: Any, name: str, entry: Any) -> Any:
    """What `getattr(space, name)` gave for this __dict__ entry (a class binds descriptors);
    _MISSING for a descriptor that refuses to be read on the class."""
    get = getattr(type(entry), "__get__", None) if isinstance(space, type) else None
    if get is None:
        return entry
    try:
        return get(entry, None, space)
    except Exception:
        return _MISSING


def _original_in_class(space: type, name: str, before: dict[str, Any]) -> Any:
    """The class's attribute before the replacement: its own entry then, or the inherited one
    (a C method of TensorBase the program set on torch.Tensor)."""
    entry = before.get(name, _MISSING)
    if entry is _MISSING:
        for base in space.__mro__[1:]:
            entry = base.__dict__.get(name, _MISSING)
            if entry is not _MISSING:
                break
    return entry


class RelayedCalls:
    """The replacements in place now (read once, when a mode is entered), keyed by id."""

    def __init__(self) -> None:
        self._originals: dict[int, tuple[Any, Any]] = {}  # id(replacement) -> (it, original)
        for space, before in _BEFORE:
            is_class = isinstance(space, type)
            for name, now in list(space.__dict__.items()):
                if before.get(name, _MISSING) is now or not callable(_resolve(space, name, now)):
                    continue
                entry = (
                    _original_in_class(space, name, before)
                    if is_class
                    else before.get(name, _MISSING)
                )
                if entry is _MISSING:
                    continue  # a name the program added: nothing torch relays through it
                replacement = _resolve(space, name, now)
                original = _resolve(space, name, entry)
                if original is not _MISSING:
                    self._originals[id(replacement)] = (replacement, original)

    def __bool__(self) -> bool:
        return bool(self._originals)

    def original(self, func: Any) -> Any:
        """The function to run for a relayed `func`: the original it replaced, or itself."""
        found = self._originals.get(id(func))
        return found[1] if found is not None and found[0] is func else func
