"""The hook points every run-time change acts through, and the patches that call them.

One set of hook points (one signature each) serves the three users of interception:

- diagnose's probes already patch these torch attributes to time them; they call the points of
  `Session.hooks` from their own patches (one patch per attribute, the points cost one truth
  test when empty);
- a `--try` trial and `tune` run without probes: `Hooks.install()` patches torch itself (class
  attributes, put back by `uninstall()` through the same `Patcher`).

The points:

- `loader_kwargs`: `fn(kwargs) -> kwargs` before `DataLoader.__init__` runs (every argument by
  name, the dataset included: num_workers, pin_memory, ...); `on_loader(loader, given_kwargs,
  final_kwargs)` listeners see the result.
- `around_forward`: calls of the *root model* (the outermost module with parameters, i.e. a call
  not nested in another module's forward) run through these middlewares, each
  `fn(module, call, args, kwargs) -> output` that may change the inputs, enter a context or swap
  the callable (`call(module, args, kwargs)` continues the chain).
- `tensor_to`: `fn(tensor, args, kwargs) -> (args, kwargs)` may rewrite the arguments of a copy
  (non_blocking).
- `around_backward`: `fn(loss) -> tensor` chooses what to back-propagate (a GradScaler scales the
  loss), and `on_backward(loss)` listeners see each backward.
- `around_step`: each optimizer instance gets a `step` wrapper running these middlewares
  `fn(optimizer, step, args, kwargs)`; `on_step(optimizer)` listeners run after it.
- `attributes`: `set_attribute(owner, name, value)` sets any other attribute while installed.
"""

from __future__ import annotations

import inspect
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader

from torchdoctor.cores import usable_cores
from torchdoctor.intercept.patching import Patcher


@dataclass
class Hooks:
    """The hook points (lists of callbacks) and, once `install()`ed, the patches calling them."""

    device_type: str = "cpu"  # "cuda" when the run can use CUDA
    observation: Any = None  # the baseline's RunObservation when a diagnosis ran, else None
    cpu_count: int = field(default_factory=lambda: usable_cores())
    loader_kwargs: list[Callable[[dict], dict]] = field(default_factory=list)
    on_loader: list[Callable[[DataLoader, dict, dict], None]] = field(default_factory=list)
    around_forward: list[Callable] = field(default_factory=list)
    tensor_to: list[Callable[[torch.Tensor, tuple, dict], tuple[tuple, dict]]] = field(
        default_factory=list
    )
    around_backward: list[Callable[[torch.Tensor], torch.Tensor]] = field(default_factory=list)
    on_backward: list[Callable[[torch.Tensor], None]] = field(default_factory=list)
    around_step: list[Callable] = field(default_factory=list)
    on_step: list[Callable[[Any], None]] = field(default_factory=list)
    # each optimizer once built (its param groups set, before the program's LR scheduler)
    on_optimizer: list[Callable[[Any], None]] = field(default_factory=list)
    used: set[str] = field(default_factory=set)  # fixes that actually changed something
    attributes: list[tuple[Any, str, Any]] = field(default_factory=list)  # (owner, name, value)
    optimizers: list = field(default_factory=list)
    _patcher: Patcher | None = None
    _local: threading.local = field(default_factory=threading.local)

    def mark_used(self, fix_name: str) -> None:
        self.used.add(fix_name)

    def set_attribute(self, owner: Any, name: str, value: Any) -> None:
        """Set `owner.name = value` while installed (backend flags, torch functions)."""
        self.attributes.append((owner, name, value))

    # -- installation ------------------------------------------------------------------------
    def install(self, beside_probes: bool = False) -> None:
        """Patch torch to call the hook points. `beside_probes`: diagnose's probes (installed
        after this) call `loader_kwargs`/`on_loader`, `around_forward` and `tensor_to` from their
        own patches, so only the other points are patched here (one patch per attribute)."""
        # The same reversible patcher diagnose's probes use: one mechanism puts torch back.
        if self._patcher is not None:
            return
        self._patcher = patcher = Patcher()
        if not beside_probes:
            patcher.replace(DataLoader, "__init__", self._patched_loader_init)
            patcher.replace(nn.Module, "__call__", self._patched_module_call)
            patcher.replace(torch.Tensor, "to", self._patched_to)
        patcher.replace(torch.Tensor, "backward", self._patched_backward)
        patcher.replace(torch.optim.Optimizer, "__init__", self._patched_optimizer_init)
        for owner, name, value in self.attributes:
            patcher.replace(owner, name, _replacement(value))

    def uninstall(self) -> None:
        if self._patcher is None:
            return
        self._patcher.restore()
        self._patcher = None

    # -- patches -----------------------------------------------------------------------------
    def _patched_loader_init(self, original):
        hooks = self
        signature = inspect.signature(original)

        def __init__(loader, *args, **kwargs):
            if not hooks.loader_kwargs:
                return original(loader, *args, **kwargs)
            hooks.construct_loader(original, signature, loader, args, kwargs)

        return __init__

    def construct_loader(self, original, signature, loader, args: tuple, kwargs: dict) -> None:
        """Run `DataLoader.__init__` (`original`) with the `loader_kwargs` rewrites applied, then
        tell the `on_loader` listeners (diagnose's loader probe calls this from its own patch)."""
        # every argument by keyword, so rewrites see the dataset too
        bound = signature.bind(loader, *args, **kwargs)
        given = {k: v for k, v in bound.arguments.items() if k != "self"}
        given.update(given.pop("kwargs", {}))  # a subclass's **kwargs
        final = dict(given)
        for rewrite in self.loader_kwargs:
            final = rewrite(dict(final))
        original(loader, **final)
        for listener in self.on_loader:
            listener(loader, given, final)

    def run_forward(self, original: Callable, module, args: tuple, kwargs: dict):
        """The root model's forward through the `around_forward` middlewares; `original` is
        `nn.Module.__call__` (diagnose's forward probe calls this from its own patch)."""
        return _chain(self.around_forward, lambda m, a, k: original(m, *a, **k))(
            module, args, kwargs
        )

    def rewrite_copy(self, tensor, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        for rewrite in self.tensor_to:
            args, kwargs = rewrite(tensor, args, kwargs)
        return args, kwargs

    def _patched_module_call(self, original):
        hooks = self

        # named `self`: torch.profiler(with_stack=True) reads it from nn.Module.__call__'s frame
        def __call__(self, *args, **kwargs):
            depth = getattr(hooks._local, "depth", 0)
            if depth or not hooks.around_forward or not _has_parameters(self):
                hooks._local.depth = depth + 1
                try:
                    return original(self, *args, **kwargs)
                finally:
                    hooks._local.depth = depth
            hooks._local.depth = 1
            try:
                return hooks.run_forward(original, self, args, kwargs)
            finally:
                hooks._local.depth = 0

        return __call__

    def _patched_to(self, original):
        hooks = self

        def to(tensor, *args, **kwargs):
            if hooks.tensor_to:
                args, kwargs = hooks.rewrite_copy(tensor, args, kwargs)
            return original(tensor, *args, **kwargs)

        return to

    def _patched_backward(self, original):
        hooks = self

        def backward(tensor, *args, **kwargs):
            for listener in hooks.on_backward:
                listener(tensor)
            target = tensor
            for transform in hooks.around_backward:
                target = transform(target)
            return original(target, *args, **kwargs)

        return backward

    def _patched_optimizer_init(self, original):
        hooks = self

        def __init__(optimizer, *args, **kwargs):
            original(optimizer, *args, **kwargs)
            if "step" in optimizer.__dict__:  # already wrapped (nested __init__ of a subclass)
                return
            hooks.optimizers.append(optimizer)
            real_step = optimizer.step  # bound method of the class

            # A bound method, not a plain closure: LR schedulers unwrap `optimizer.step.__func__`.
            def step(_optimizer, *step_args, **step_kwargs):
                if getattr(hooks._local, "in_step", False):  # re-entry, e.g. from scaler.step
                    return real_step(*step_args, **step_kwargs)
                hooks._local.in_step = True
                try:
                    result = _chain(hooks.around_step, lambda o, a, k: real_step(*a, **k))(
                        optimizer, step_args, step_kwargs
                    )
                finally:
                    hooks._local.in_step = False
                for listener in hooks.on_step:
                    listener(optimizer)
                return result

            optimizer.step = types.MethodType(step, optimizer)
            for listener in hooks.on_optimizer:
                listener(optimizer)

        return __init__


def _replacement(value: Any) -> Callable[[Any], Any]:
    return lambda _original: value


def _chain(middlewares: list[Callable], innermost: Callable) -> Callable:
    """Compose `fn(target, call, args, kwargs)` middlewares around `innermost(target, a, k)`."""
    call = innermost
    for middleware in reversed(middlewares):
        call = _bind(middleware, call)
    return call


def _bind(middleware: Callable, call_next: Callable) -> Callable:
    return lambda target, args, kwargs: middleware(target, call_next, args, kwargs)


def _has_parameters(module: nn.Module) -> bool:
    return next(module.parameters(), None) is not None


def map_tensors(value, fn: Callable[[torch.Tensor], torch.Tensor]):
    """Apply `fn` to every tensor in nested tuples/lists/dicts, keeping the structure."""
    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # namedtuple
        return type(value)(*(map_tensors(v, fn) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(map_tensors(v, fn) for v in value)
    if isinstance(value, dict):
        return {k: map_tensors(v, fn) for k, v in value.items()}
    return value
