"""Reversible monkey-patching: every attribute we replace is put back exactly as it was.

Probes patch class and module attributes of torch (`torch.Tensor.item`, `DataLoader.__iter__`,
`torch.save`, ...). An attribute that a class only inherited (it is not in the class's own
`__dict__`) is deleted again on restore, so the inherited one shows through as before.

Our wrappers must stay invisible to the program's own code transformations:
- TorchScript resolves a function it meets in scripted code (`torch.tensor`, `torch.autograd.grad`)
  through its table of builtins, keyed by the function object; a wrapper of a builtin is
  registered there as the same aten op (and unregistered on restore), so TorchScript never tries
  to compile our Python code (`torch.distributed.optim` scripts `torch.tensor` calls at import).
- `torch.jit.trace` records and dynamo traces whatever Python runs: wrappers start with
  `if transforming(): return original(...)`, so the traced program is exactly the program's own
  (dynamo folds `is_compiling()` to True and never sees the probe's code). A wrapped C method of
  tensors (`Tensor.to`, `.item`) is called there as `unpatched_tensor_method(...)`, the form
  dynamo records as the tensor method itself (it cannot trace the bare C method descriptor).
- Dynamo snapshots torch's functions and tensor methods into cached tables when it is imported
  and first used (`trace_rules`); a program that imports it while our patches are on would
  leave our wrappers there in place of torch's own. The tables are (re)built with every patch
  taken off for that moment: at once if dynamo is already imported, else right after the
  program imports it (an import hook that only waits for that one module).
- Dynamo writes the stack of the code it traced into its errors' messages ("from user code:"),
  our wrappers' frames among them where it traced through one (`opt.zero_grad()` compiled). Its
  `get_real_stack` is wrapped at the same moments to leave our frames out, so that a program
  printing the message itself shows its own frames, as plainly (put back with the last patch).
- A wrapper calls the wrapped callable through a name `original`: an exception raised by that
  call is the program's (a user's `.item()` on a 16-element tensor), not ours
  (`raised_by_the_original` tells them apart for the crash report). The forward probe's
  `nn.Module.__call__` wrapper runs torch's `__call__` inline in nested module calls: its
  `self._call_impl(...)` is that call too.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import importlib.abc
import importlib.util
import itertools
import linecache
import os
import re
import sys
import traceback
import weakref
from collections.abc import Callable, Iterator
from types import CodeType, FrameType, TracebackType
from typing import Any

import torch

_MISSING = object()


# Bound once: every wrapper calls transforming(), and the attribute look-ups through `torch.`
# were a third of its cost. Dynamo knows its test functions by the function object, whatever
# their name. `is_dynamo_compiling()` is one call (`is_compiling()` is two: it asks
# `torch.jit.is_scripting()` first); the flag `is_compiling()` would return next (export's
# non-strict tracing sets it) is read without a call.
_compiler = torch.compiler
# an older torch without the two: its public is_compiling() alone
_FLAG = hasattr(_compiler, "_is_compiling_flag") and hasattr(_compiler, "is_dynamo_compiling")
_is_dynamo_compiling = _compiler.is_dynamo_compiling if _FLAG else _compiler.is_compiling
_tracing_state = torch._C._get_tracing_state
# Only dynamo runs a wrapper's Python symbolically (the others record the ops it dispatches): a
# hot wrapper may test this alone first and leave the rest of transforming() for later
dynamo_compiling = _is_dynamo_compiling


def transforming() -> bool:
    """Dynamo is tracing (torch.compile), torch.export is tracing, or torch.jit.trace is
    recording: pass straight through. `is_dynamo_compiling()` comes first: dynamo folds it to
    True and never looks at the other tests."""
    return (
        _is_dynamo_compiling()
        or (_FLAG and _compiler._is_compiling_flag)
        or _tracing_state() is not None
    )


# Dynamo's per-code switch (torch's C extension: no dynamo import); absent in an older torch
try:
    from torch._C._dynamo.eval_frame import (
        _FrameAction,
        _FrameExecStrategy,
        set_code_exec_strategy,
    )
except ImportError:  # pragma: no cover - torch without it
    set_code_exec_strategy = None  # type: ignore[assignment]


class _UnlessOneGraph:
    """Dynamo's `torch.compiler.disable` marker, true except while dynamo traces code that must
    be one graph (`fullgraph=True`, `error_on_graph_break`): there a graph break is the
    program's error, one it does not have plainly (a custom optimizer's step compiled whole),
    so the hook is inlined instead, and returns at once under dynamo. Dynamo reads the marker
    with `inspect.getattr_static` and tests its truth, the moment it meets the call (in
    Python, not traced): `on_one_graph` (a weak reference to a bound method) is told then."""

    def __init__(self, on_one_graph: Callable[[], None] | None = None) -> None:
        method: Any = on_one_graph  # a bound method; WeakMethod's stub wants its own type
        self.on_one_graph = None if method is None else weakref.WeakMethod(method)

    def __bool__(self) -> bool:
        if not _tracing_one_graph():
            return True
        told = self.on_one_graph and self.on_one_graph()
        if told is not None:
            told()
        return False


def _tracing_one_graph() -> bool:
    convert = sys.modules.get("torch._dynamo.symbolic_convert")  # look, never import
    if convert is None:
        return False
    try:
        tx = convert.InstructionTranslator.current_tx()
        return bool(tx.one_graph or tx.error_on_graph_break)
    except Exception:  # no trace under way, or a dynamo without these: a graph break, as before
        return False


def eager_under_dynamo(
    function: Callable[..., Any], on_one_graph: Callable[[], None] | None = None
) -> None:
    """Dynamo runs `function` (a hook torch calls, e.g. a global optimizer step hook) as
    `torch.compiler.disable` would: met while tracing a compiled step, it is a graph break, not
    traced (no warnings about our `time.perf_counter` on the program's stderr, no guards on our
    state that recompile every step); called, its frame and every frame under it run eagerly.
    Done without importing dynamo (4 s): the marker attribute dynamo reads, and the per-code
    skip in torch's C extension. Under `fullgraph=True` it is inlined (`_UnlessOneGraph`):
    `function` must then return at once when `dynamo_compiling()`; `on_one_graph` (a bound
    method, held weakly) is called each time dynamo inlines it there."""
    function._torchdynamo_disable = _UnlessOneGraph(on_one_graph)  # type: ignore[attr-defined]
    if set_code_exec_strategy is not None:
        skip = _FrameAction.SKIP
        set_code_exec_strategy(function.__code__, _FrameExecStrategy(skip, skip))


def _torchscript_builtins():
    """TorchScript's {id(function): aten op} table (built on first use, from torch's own
    functions: building it before our patches keeps the originals in it)."""
    from torch.jit import _builtins

    return _builtins._get_builtin_table()


# `tensor.name(...)` as torch's C tensor class defines it, bypassing our patch of torch.Tensor.
# Spelled out per method: dynamo traces `super(torch.Tensor, t).to(...)` as the tensor method
# `to`, but neither `getattr(super(...), name)` nor the bare C method descriptor.
_UNPATCHED_TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "to": lambda t, *args, **kwargs: super(torch.Tensor, t).to(*args, **kwargs),
    "cuda": lambda t, *args, **kwargs: super(torch.Tensor, t).cuda(*args, **kwargs),
    "item": lambda t: super(torch.Tensor, t).item(),
    "tolist": lambda t: super(torch.Tensor, t).tolist(),
    "numpy": lambda t, *args, **kwargs: super(torch.Tensor, t).numpy(*args, **kwargs),
    "cpu": lambda t, *args, **kwargs: super(torch.Tensor, t).cpu(*args, **kwargs),
    "__bool__": lambda t: super(torch.Tensor, t).__bool__(),
    "__float__": lambda t: super(torch.Tensor, t).__float__(),
    "__int__": lambda t: super(torch.Tensor, t).__int__(),
}


def unpatched_tensor_method(name: str) -> Callable[..., Any]:
    """The C method `name` of tensors, called as `f(tensor, *args, **kwargs)` in a form that
    dynamo and torch.jit.trace record as the tensor method itself."""
    return _UNPATCHED_TENSOR_METHODS[name]


_CALLS_OF_ORIGINAL = ("original(", "self._call_impl(")
_CALL_OF_ORIGINAL = re.compile(r"\s*(return\s+)?(\w+\s*=\s*)?(original|self\._call_impl)\(")


def raised_by_the_original(tb: TracebackType) -> bool:
    """The traceback entry `tb` (a wrapper's frame) stopped in its call of the wrapped callable:
    the exception came out of torch or the program, through us, not from our own code."""
    return _at_call_of_original(tb.tb_frame.f_code, tb.tb_lasti, tb.tb_lineno)


def calling_the_original(frame: FrameType) -> bool:
    """The frame (a wrapper's) is inside its call of the wrapped callable right now: a warning
    raised there is the program's or torch's (intercept.warning_source)."""
    return _at_call_of_original(frame.f_code, frame.f_lasti, frame.f_lineno)


def _at_call_of_original(code: CodeType, lasti: int, lineno: int) -> bool:
    positions = getattr(code, "co_positions", None)  # Python >= 3.11: the exact expression
    if positions is not None:
        for index, (line, end_line, column, end_column) in enumerate(positions()):
            if index == lasti // 2:
                if line is None or column is None or line != end_line:
                    break
                text = linecache.getline(code.co_filename, line)[column:end_column]
                return text.startswith(_CALLS_OF_ORIGINAL)
    return bool(_CALL_OF_ORIGINAL.match(linecache.getline(code.co_filename, lineno)))


_LIVE: weakref.WeakSet[Patcher] = weakref.WeakSet()  # patchers with patches on
_DYNAMO_TABLES = "torch._dynamo.trace_rules"
_DYNAMO_ERRORS = "torch._dynamo.exc"
_PACKAGE_FOLDER = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


_FIRST_PATCH = itertools.count()  # orders patchers by their first patch


@contextlib.contextmanager
def _all_patches_off() -> Iterator[None]:
    """Newest patcher off first, put back oldest first: patchers stacked on one attribute (the
    --try hooks under diagnose's probes) unwind and rewind as a stack; in any other order the
    outer wrappers are lost (a WeakSet iterates in no set order)."""
    patchers = sorted(_LIVE, key=lambda patcher: patcher._first_patch, reverse=True)
    undone = [patcher._take_off() for patcher in patchers]
    try:
        yield
    finally:
        for patcher, current in reversed(list(zip(patchers, undone))):
            patcher._put_back(current)


def _rebuild_dynamo_tables(trace_rules) -> None:
    """Dynamo's cached tables of torch functions and tensor methods, built from torch's own."""
    with _all_patches_off():
        for table in (trace_rules.get_torch_obj_rule_map, trace_rules.get_tensor_method):
            table.cache_clear()
            table()


def _hide_our_frames_from_dynamo() -> None:
    """Dynamo's error messages list the frames of the code it traced: ours left out."""
    errors: Any = sys.modules.get(_DYNAMO_ERRORS)
    real_stack = getattr(errors, "get_real_stack", None)
    if real_stack is None or hasattr(real_stack, "torchdoctor_original"):
        return

    def get_real_stack(*args, **kwargs):
        stack = real_stack(*args, **kwargs)
        if not stack:
            return stack
        theirs = [frame for frame in stack if not frame.filename.startswith(_PACKAGE_FOLDER)]
        return stack if len(theirs) == len(stack) else traceback.StackSummary.from_list(theirs)

    get_real_stack.torchdoctor_original = real_stack  # type: ignore[attr-defined]
    errors.get_real_stack = get_real_stack


def _show_dynamo_our_frames_again() -> None:
    errors: Any = sys.modules.get(_DYNAMO_ERRORS)
    original = getattr(getattr(errors, "get_real_stack", None), "torchdoctor_original", None)
    if original is not None:
        errors.get_real_stack = original


class _DynamoImportWatch(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Waits for dynamo's `trace_rules` to be imported, lets it load, then rebuilds its tables."""

    def find_spec(self, fullname, path, target=None):
        if fullname != _DYNAMO_TABLES:
            return None
        _stop_watching_dynamo()
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return None
        loader = spec.loader

        def exec_module(module) -> None:
            loader.exec_module(module)  # type: ignore[union-attr]
            if _LIVE:
                _rebuild_dynamo_tables(module)
                _hide_our_frames_from_dynamo()  # imported before trace_rules

        spec.loader = _LoaderAfter(loader, exec_module)
        return spec


class _LoaderAfter(importlib.abc.Loader):
    def __init__(self, loader, exec_module) -> None:
        self.loader = loader
        self.exec_module = exec_module  # type: ignore[method-assign]

    def create_module(self, spec):
        return self.loader.create_module(spec)


_WATCH = _DynamoImportWatch()


def _watch_dynamo() -> None:
    """Before a patcher's first patch. Dynamo imported already: build its tables now (from
    torch's own functions); else wait for its import."""
    trace_rules = sys.modules.get(_DYNAMO_TABLES)
    if trace_rules is not None:
        _rebuild_dynamo_tables(trace_rules)
        _hide_our_frames_from_dynamo()
    elif _WATCH not in sys.meta_path:
        sys.meta_path.insert(0, _WATCH)


def _stop_watching_dynamo() -> None:
    if _WATCH in sys.meta_path:
        sys.meta_path.remove(_WATCH)


class Patcher:
    def __init__(self) -> None:
        self._saved: list[tuple[Any, str, Any]] = []  # (owner, name, original __dict__ entry)
        self._first_patch = -1  # set at the first patch: newer patchers wrap older ones
        self._handles: list[Any] = []  # hook handles with .remove()
        self._builtins: list[int] = []  # ids of wrappers registered as TorchScript builtins
        # (id(owner), name) -> (owner, the entry before us, our wrapper): lift() and put_on()
        self._wrappers: dict[tuple[int, str], tuple[Any, Any, Any]] = {}
        self.lifted: list[tuple[Any, str]] = []  # patches lifted for a moment (lift())
        self._modules_before: set[str] = set()  # sys.modules at the first patch

    def original(self, owner: Any, name: str) -> Any:
        return getattr(owner, name)

    def replace(self, owner: Any, name: str, make: Callable[[Any], Any]) -> Any:
        """Replace `owner.name` with `make(original)`; returns the original callable."""
        own = owner.__dict__.get(name, _MISSING) if hasattr(owner, "__dict__") else _MISSING
        original = getattr(owner, name)
        if self not in _LIVE:  # our first patch
            _watch_dynamo()
            self._modules_before = set(sys.modules)
            self._first_patch = next(_FIRST_PATCH)
            _LIVE.add(self)
        self._saved.append((owner, name, own))
        wrapper = make(original)
        builtins = _torchscript_builtins()
        op = builtins.get(id(original))
        if op is not None and id(wrapper) not in builtins:
            builtins[id(wrapper)] = op
            self._builtins.append(id(wrapper))
        setattr(owner, name, wrapper)
        self._wrappers[(id(owner), name)] = (owner, own, wrapper)
        return original

    def lift(self, owner: Any, name: str) -> bool:
        """Take our patch of `owner.name` off for a moment (put_on() puts it back), when it is
        the one in place (no newer patcher wrapped it); True if it was taken off."""
        entry = self._wrappers.get((id(owner), name))
        if entry is None or owner.__dict__.get(name, _MISSING) is not entry[2]:
            return False
        _set_or_delete(owner, name, entry[1])
        self.lifted.append((owner, name))
        return True

    def put_on(self) -> None:
        """Put back every patch lift() took off (unless something replaced it meanwhile)."""
        while self.lifted:
            owner, name = self.lifted.pop()
            _, before, wrapper = self._wrappers[(id(owner), name)]
            if owner.__dict__.get(name, _MISSING) is before:
                setattr(owner, name, wrapper)

    def keep_handle(self, handle: Any) -> None:
        self._handles.append(handle)

    def restore(self) -> None:
        """Undo everything, newest first (so nested patches of one attribute unwind correctly)."""
        self.lifted.clear()
        wrappers = [
            (owner, name, wrapper) for (_, name), (owner, _, wrapper) in self._wrappers.items()
        ]
        self._wrappers.clear()
        while self._handles:
            self._handles.pop().remove()
        while self._saved:
            owner, name, own = self._saved.pop()
            _set_or_delete(owner, name, own)
        builtins = _torchscript_builtins()
        while self._builtins:
            builtins.pop(self._builtins.pop(), None)
        _LIVE.discard(self)
        _forget_wrappers_in_torch_modules(wrappers, set(sys.modules) - self._modules_before)
        if not _LIVE:
            _stop_watching_dynamo()
            _show_dynamo_our_frames_again()
        trace_rules = sys.modules.get(_DYNAMO_TABLES)
        if trace_rules is not None:  # imported while patched: forget what it saw
            _rebuild_dynamo_tables(trace_rules)

    def _take_off(self) -> list[tuple[Any, str, Any]]:
        """Put every patched attribute back for a moment; returns what to reinstate."""
        current = [
            (owner, name, owner.__dict__.get(name, _MISSING)) for owner, name, _ in self._saved
        ]
        for owner, name, own in reversed(self._saved):
            _set_or_delete(owner, name, own)
        return current

    def _put_back(self, current: list[tuple[Any, str, Any]]) -> None:
        for owner, name, value in current:
            _set_or_delete(owner, name, value)


def _forget_wrappers_in_torch_modules(wrappers: list[tuple[Any, Any, Any]], names) -> None:
    """A torch module imported while our patches were on may have kept our wrappers: as a module
    global (dynamo's `unpatched_nn_module_call = torch.nn.Module.__call__`), in a table built at
    its import (dynamo's `all_tensor_attrs`, a dict of every tensor method; export's set of
    logging functions, `print` among them, on a config object), or in a function cache filled
    while they were on (dynamo's lru-cached handler maps). After the patches come off each gets
    what is in place now, and a cache holding one is emptied (in any torch module: torch's
    `get_testing_overrides`, called by dynamo, is imported before us): none holds our wrapper
    and, through it, the session and the program's objects."""
    current = {id(wrapper): (wrapper, owner, name) for owner, name, wrapper in wrappers}

    def now_in_place(value: Any) -> Any:
        entry = current.get(id(value))
        return value if entry is None or entry[0] is not value else getattr(entry[1], entry[2])

    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith("torch.") or module is None:
            continue
        namespace = getattr(module, "__dict__", {})
        if module_name not in names:  # imported before us: only its caches filled since
            for value in list(namespace.values()):
                if type(value) is _LRU_CACHE:
                    _forget_in_table(value, now_in_place, current)
            continue
        for key, value in list(namespace.items()):
            namespace[key] = now_in_place(value)
            for held in _tables_in(value, module_name):
                _forget_in_table(held, now_in_place, current)


def _tables_in(value: Any, module_name: str) -> list[Any]:
    """The containers a module global holds our wrappers in, one level down: itself, the
    attributes of an object of the module's own class, the caches of its functions."""
    # types only (`type()`, never isinstance or getattr): a global's own attribute look-up may
    # do anything (ctypes loads a library, a deprecated alias warns on `__class__`)
    if issubclass(type(value), (dict, set, list, _LRU_CACHE)):
        return [value]
    if issubclass(type(value), type):
        if value.__module__ != module_name:
            return []
        found = (
            entry.__func__ if issubclass(type(entry), (staticmethod, classmethod)) else entry
            for entry in vars(value).values()
        )
        return [entry for entry in found if type(entry) is _LRU_CACHE]
    if type(value).__module__ != module_name:
        return []
    try:
        attributes = object.__getattribute__(value, "__dict__")
    except AttributeError:  # slots only
        return []
    if type(attributes) is dict:
        return [held for held in attributes.values() if issubclass(type(held), (dict, set, list))]
    return []


_LRU_CACHE = functools._lru_cache_wrapper


def _forget_in_table(table: Any, now_in_place: Callable[[Any], Any], current: dict) -> None:
    if issubclass(type(table), dict):
        for key, value in list(table.items()):
            if id(value) in current:
                table[key] = now_in_place(value)
    elif issubclass(type(table), set):
        for value in [value for value in table if id(value) in current]:
            table.discard(value)
            table.add(now_in_place(value))
    elif issubclass(type(table), list):
        table[:] = [now_in_place(value) for value in table]
    elif any(_holds_one_of(cache, current) for cache in gc.get_referents(table)):
        table.cache_clear()  # an lru_cache's own dict, filled while our patches were on


def _holds_one_of(cache: Any, current: dict) -> bool:
    """A cache's dict holds one of our wrappers, in its results up to three containers down
    (torch's `_get_overridable_functions` caches a pair of a dict of lists)."""
    return issubclass(type(cache), dict) and _contains(list(cache.values()), current, 3)


def _contains(values: list[Any], current: dict, depth: int) -> bool:
    for value in values:
        if id(value) in current:
            return True
        if depth and issubclass(type(value), dict):
            if _contains([*value.keys(), *value.values()], current, depth - 1):
                return True
        elif depth and issubclass(type(value), (set, frozenset, list, tuple)):
            if _contains(list(value), current, depth - 1):
                return True
    return False


def _set_or_delete(owner: Any, name: str, value: Any) -> None:
    if value is _MISSING:
        try:
            delattr(owner, name)
        except AttributeError:
            pass
    else:
        setattr(owner, name, value)
