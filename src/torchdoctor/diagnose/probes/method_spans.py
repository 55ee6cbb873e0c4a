"""A model's own method called instead of the model: `model.nll(x, y)`, `model.loss(batch)`,
`model.training_step(batch)`, `agent.get_action_and_value(obs)`.

The forward probe times the root module call. A program that calls a method of its model rather
than the model makes each submodule the method calls a root forward of its own, and the work
between them (a CRF's forward algorithm, a VAE's loss, a policy's distribution) falls outside
every forward: it was booked "other". So when a module is first seen as a root, the frames that
called it are read once: the outermost method of a module holding it, up the chain of such
methods, is wrapped on the class that defines it, and its later calls are root forwards of that
module (the step's forward then spans the method, as `model(x)` spans `forward`). The first call
is missed: it runs within the warm-up steps.

A model whose forward is functional (MAML's `model.parameterised(x, weights)`: F.linear on weights
passed in, no submodule called, the model never called itself) has no root call to start from:
its method is found from the torch calls the program makes outside every phase in the op-counting
step (the step before the measured ones), when the method's module has parameters and was never
called as a training forward (a `model.loss(out, y)` beside `model(x)` stays the loss).

A model's submodule called as a root again after the model was seen is looked at too, once per
calling code: a second method calling submodules the first one found (a policy's `v(s)` beside its
`pi(s)`) is wrapped then.

Left as they are: torch's and installed packages' methods, dunder methods (`__init__` probing a
shape), generators, static and class methods, and a method that runs a backward or an optimizer
step itself or through one of its class's methods it names (`train_step(self, batch)` holding the
whole step is no forward; its output is a detached loss, which would make it an evaluation): the
walk up the chain stops below it, at the method it called (`train_net` -> `v(s)`).
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from functools import wraps
from typing import Any

import torch
import torch.jit._script
from torch import nn

from torchdoctor.diagnose.callsite import installed_package, is_library_code

MAX_FRAMES = 8  # callers read above a module's first root call, once per module
# a method naming one of these runs (part of) a training step itself, not a forward
STEP_NAMES = frozenset(
    {"backward", "manual_backward", "step", "zero_grad", "grad", "autograd", "clip_grad_norm_"}
)
WRAPPED = "_torchdoctor_method"  # our wrapper's attribute: the method it wraps
_NOT_PLAIN = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def _method_of(frame) -> tuple[nn.Module, type, types.FunctionType] | None:
    """(the module, the class defining the method, the method) when `frame` runs a plain method
    of the program's own on an nn.Module; else None."""
    code = frame.f_code
    name = code.co_name
    if not code.co_argcount or code.co_flags & _NOT_PLAIN or name.startswith("__"):
        return None
    if is_library_code(code) or installed_package(code.co_filename) is not None:
        return None
    owner = frame.f_locals.get(code.co_varnames[0])
    if not isinstance(owner, nn.Module):
        return None
    for klass in type(owner).__mro__:
        function = klass.__dict__.get(name)
        if function is not None:
            break
    function = getattr(function, WRAPPED, function)  # a method this module wrapped already
    if not isinstance(function, types.FunctionType) or function.__code__ is not code:
        return None
    return owner, klass, function


def _runs_a_step(klass: type, function: types.FunctionType) -> bool:
    """The method, or a method of its class it names (`self.update(loss)`), names a backward, an
    optimizer step or a gradient computation."""
    names = set(function.__code__.co_names)
    if names & STEP_NAMES:
        return True
    for name in names:
        helper = getattr(klass, name, None)
        if isinstance(helper, types.FunctionType) and STEP_NAMES & set(helper.__code__.co_names):
            return True
    return False


def in_a_constructor(frame) -> bool:
    """`frame`, or one of the MAX_FRAMES frames above it, runs the `__init__` of an nn.Module: a
    module called there is the model probing its layers' output size on a dummy input while it
    is built (`self.cnn(torch.zeros(1, *shape))` to size the next Linear), not a forward."""
    for _ in range(MAX_FRAMES):
        if frame is None:
            return False
        code = frame.f_code
        if code.co_name == "__init__" and code.co_argcount:
            if isinstance(frame.f_locals.get(code.co_varnames[0]), nn.Module):
                return True
        frame = frame.f_back
    return False


def _holds(owner: nn.Module, module: nn.Module) -> bool:
    return owner is not module and any(m is module for m in owner.modules())


class MethodSpans:
    """Wraps the program's model methods found calling submodules as roots (see the module's
    docstring). `root_call(original, module, args, kwargs)` is the forward probe's root call;
    `in_root()` tells whether a root forward is running; `training_calls` is the probe's map of
    each model's latest training call, which the what-if replays call as `module(*args)`: a
    method's call is kept there as its MethodCall."""

    def __init__(
        self,
        patcher,
        root_call: Callable,
        in_root: Callable[[], bool],
        training_calls: dict[int, tuple],
    ) -> None:
        self._patcher = patcher
        self._root_call = root_call
        self._in_root = in_root
        self._training_calls = training_calls
        self._wrapped: set[tuple[type, str]] = set()
        self._methods: list[tuple[type, str, Any]] = []  # (class, name, its own function)
        self._callers_seen: set[tuple] = set()  # held_root_call's (code, its caller's code)

    def first_root_call(self, module: nn.Module, frame) -> None:
        """`module` is a root for the first time, called from `frame`."""
        self._wrap_outermost(None, module, frame)

    def held_root_call(self, module: nn.Module, frame) -> None:
        """`module`, a submodule of a model seen, is a root again, called from `frame`: from a
        method of that model not wrapped yet (a policy's `v(s)` beside its `pi(s)`, which the
        submodules' first root call found), looked at once per calling code and its caller."""
        back = frame.f_back
        key = (frame.f_code, back.f_code if back is not None else None)
        if key in self._callers_seen:
            return
        self._callers_seen.add(key)
        self._wrap_outermost(None, module, frame)

    def torch_call_outside(self, frame) -> None:
        """A torch function was called from `frame` (the program's own code) outside every
        phase, in the step before the measured ones (the op-counting step). A method of a model
        that has parameters and was never called as a training forward, running torch calls
        itself, is the model's functional forward (MAML's `model.parameterised(x, weights)`:
        `F.linear` on weights passed in, no submodule called): its later calls are root
        forwards of that model. A model also called as `model(x)` in training keeps that as its
        forward (a `model.loss(out, y)` beside it stays the loss, as a function would)."""
        method = _method_of(frame)
        if method is None:
            return
        owner = method[0]
        if id(owner) in self._training_calls or next(owner.parameters(), None) is None:
            return
        self._wrap_outermost(method, owner, frame.f_back)

    def _wrap_outermost(self, found, module: nn.Module, frame) -> None:
        """Wrap the outermost method, from `frame` up, of a module holding `module` (or of
        `found`'s module, `found` being the method `frame` was called from), up the chain."""
        for _ in range(MAX_FRAMES):
            if frame is None:
                break
            method = _method_of(frame)
            if method is None or not (
                (found is not None and method[0] is found[0]) or _holds(method[0], module)
            ):
                break
            if found is not None and _runs_a_step(method[1], method[2]):
                # the method that runs the step (`train_net`: backward and step) is no forward;
                # the one it called is (`v(s)`, a V-trace's targets under no_grad)
                break
            found, module, frame = method, method[0], frame.f_back
        if found is None:
            return
        owner, klass, function = found
        key = (klass, function.__name__)
        if key in self._wrapped or _runs_a_step(klass, function):
            return
        self._wrapped.add(key)
        if not self._methods:  # the first method wrapped: TorchScript must not see the wrappers
            self._patcher.replace(torch.jit._script, "_script_impl", self._unwrapped_for_script)
        self._methods.append((klass, function.__name__, function))
        self._patcher.replace(klass, function.__name__, self._wrap)

    def _unwrapped_for_script(self, original: Callable) -> Callable:
        """torch.jit.script compiles a module's methods from their source, resolving names in
        the function it finds on the class: there it must find the program's own (our wrapper's
        closure and globals are not the method's), so they are put back while it compiles."""
        methods = self._methods

        @wraps(original)
        def _script_impl(*args: Any, **kwargs: Any) -> Any:
            wrappers = [(k, name, k.__dict__.get(name)) for k, name, _ in methods]
            for klass, name, function in methods:
                setattr(klass, name, function)
            try:
                return original(*args, **kwargs)
            finally:
                for klass, name, wrapper in wrappers:
                    setattr(klass, name, wrapper)

        return _script_impl

    def _wrap(self, original: Callable) -> Callable:
        root_call, in_root, training_calls = self._root_call, self._in_root, self._training_calls
        name = original.__name__
        adapters: dict[int, MethodCall] = {}  # id(model) -> its method as a callable module

        @wraps(original)  # Lightning and others read a training_step's signature
        def method(self, *args: Any, **kwargs: Any) -> Any:
            if in_root() or not isinstance(self, nn.Module):
                return original(self, *args, **kwargs)
            try:
                return root_call(original, self, args, kwargs)
            finally:  # also when the program's error ends the run inside the method
                call = training_calls.get(id(self))
                if call is not None and call[0] is self:
                    # the what-if replays call the model kept here as `module(*args)`: this
                    # method took the arguments, so the method is what they call
                    adapter = adapters.get(id(self))
                    if adapter is None or adapter.target is not self:
                        adapter = adapters[id(self)] = MethodCall(self, name)
                    training_calls[id(self)] = (adapter, call[1], call[2])

        setattr(method, WRAPPED, original)
        return method


class MethodCall(nn.Module):
    """A model's method as a module: `MethodCall(model, "nll")(x, y)` is `model.nll(x, y)` (the
    what-if replays deep-copy and call a training forward's module on its arguments)."""

    def __init__(self, target: nn.Module, name: str) -> None:
        super().__init__()
        self.target = target
        self.method_name = name

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.target, self.method_name)(*args, **kwargs)
