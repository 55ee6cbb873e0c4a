"""Interception points for run-time fixes (`--try`), offered by the probes.

The probes already sit where a fix needs to act; a fix registers a callback here instead of
patching torch a second time. Every list is empty in a plain diagnosis, and each probe checks
"is the list empty?" before doing anything, so an unused extension costs one truth test.

- `loader_kwargs`: `fn(loader_class, kwargs) -> kwargs`, called before `DataLoader.__init__`
  runs (positional arguments are folded into `kwargs` by name first), e.g. set num_workers,
  pin_memory, persistent_workers.
- `forward_context`: `fn(module, info) -> ContextManager | None`, called when the *root* model's
  forward starts; the returned context (e.g. `torch.autocast("cuda", torch.bfloat16)`,
  `torch.inference_mode()`) is entered before the forward and exited after it (also on errors).
  `info` is a `ForwardInfo`: grad enabled, inference mode, train mode, call site.
- `tensor_to`: `fn(tensor, args, kwargs) -> (args, kwargs)`, rewrites the arguments of
  `Tensor.to` / `Tensor.cuda` (e.g. non_blocking=True).
- `on_step`: `fn(step_record)`, called after each training step the tracker closes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ForwardInfo:
    grad_enabled: bool
    inference_mode: bool
    train_mode: bool
    location: str


@dataclass
class Extensions:
    loader_kwargs: list[Callable[[type, dict], dict]] = field(default_factory=list)
    forward_context: list[Callable[[Any, ForwardInfo], Any]] = field(default_factory=list)
    tensor_to: list[Callable[[Any, tuple, dict], tuple[tuple, dict]]] = field(default_factory=list)
    on_step: list[Callable[[Any], None]] = field(default_factory=list)
