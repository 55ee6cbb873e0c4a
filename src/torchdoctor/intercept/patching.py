"""Reversible monkey-patching: every attribute we replace is put back exactly as it was.

Probes patch class and module attributes of torch (`torch.Tensor.item`, `DataLoader.__iter__`,
`torch.save`, ...). An attribute that a class only inherited (it is not in the class's own
`__dict__`) is deleted again on restore, so the inherited one shows through as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_MISSING = object()


class Patcher:
    def __init__(self) -> None:
        self._saved: list[tuple[Any, str, Any]] = []  # (owner, name, original __dict__ entry)
        self._handles: list[Any] = []  # hook handles with .remove()

    def original(self, owner: Any, name: str) -> Any:
        return getattr(owner, name)

    def replace(self, owner: Any, name: str, make: Callable[[Any], Any]) -> Any:
        """Replace `owner.name` with `make(original)`; returns the original callable."""
        own = owner.__dict__.get(name, _MISSING) if hasattr(owner, "__dict__") else _MISSING
        original = getattr(owner, name)
        self._saved.append((owner, name, own))
        setattr(owner, name, make(original))
        return original

    def keep_handle(self, handle: Any) -> None:
        self._handles.append(handle)

    def restore(self) -> None:
        """Undo everything, newest first (so nested patches of one attribute unwind correctly)."""
        while self._handles:
            self._handles.pop().remove()
        while self._saved:
            owner, name, own = self._saved.pop()
            if own is _MISSING:
                try:
                    delattr(owner, name)
                except AttributeError:
                    pass
            else:
                setattr(owner, name, own)
