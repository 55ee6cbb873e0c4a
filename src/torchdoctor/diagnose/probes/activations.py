"""Activations by module: the bytes autograd saves for backward, and which module saved them.

During one step, `torch.autograd.graph.saved_tensors_hooks` sees every tensor a forward keeps for
backward and global module hooks keep the stack of running modules, so each saved storage is
booked (once, by storage) to the innermost module and its ancestors. Parameters are left out:
they are parameter memory, not activations. Gradient accumulation runs several forward/backward
pairs in one step; their saved tensors do not live together, so the largest pair is kept.

Code that cannot run under saved-tensor hooks says so with
`torch.autograd.graph.disable_saved_tensors_hooks`, which raises when any hook is installed:
torch.func's grad/vjp/jacrev do, so a functional training step would crash under the counter.
While the counter runs, that context manager first takes the counter's hooks off (they are on
top of the stack: nothing of the program's can sit above them and still be disabled), and puts
them back after: the transform's saved tensors go uncounted, the program runs as without us.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from types import FrameType

import torch
from torch.nn.modules import module as module_hooks

from torchdoctor.diagnose.callsite import is_library_file
from torchdoctor.diagnose.observations import ModuleActivations

OUTSIDE = "(no module)"  # tensors saved by functional code outside every module
MAX_MODULES = 40  # entries kept in the observation, largest first


_OURS = threading.local()  # depth of not_counted() blocks on this thread


@contextlib.contextmanager
def not_counted():
    """torchdoctor's own forward/backward (a probe's benchmark): not the program's activations."""
    _OURS.depth = getattr(_OURS, "depth", 0) + 1
    try:
        yield
    finally:
        _OURS.depth -= 1


class ActivationCounter:
    def __init__(self) -> None:
        self.stack: list[torch.nn.Module] = []
        # module id -> (name, class, depth, kids, its root's id)
        self.names: dict[int, tuple[str, str, int, bool, int]] = {}
        # root id -> the program's name for it (`Enc1`, `self.gen_a`; its class where none is
        # found): several roots of the same layout (MUNIT's two encoders) name their modules alike
        self.root_labels: dict[int, str] = {}
        self.inputs: dict[int, int] = {}  # module id -> bytes of its first call's tensor inputs
        self.parameter_storages: set[tuple] = set()
        self.saved: dict[tuple, tuple[int, tuple[int, ...]]] = {}  # storage -> (bytes, owners)
        self.best: dict[tuple, tuple[int, tuple[int, ...]]] = {}
        self.best_total = 0
        self.active = False
        self.compiled = False  # a torch.compile'd model was called: counting stopped
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, _unpack)
        self._handles: list = []
        self._disable_hooks = torch.autograd.graph.disable_saved_tensors_hooks
        self._aside = 0  # depth of disable_saved_tensors_hooks blocks that took our hooks off
        # Saved-tensor hooks live on one thread's stack: the thread that pushed ours (None once
        # popped). A program that trains in a thread of its own ends the counted step there, and
        # only this thread can take them off again (the session's stop, on the thread it began).
        self._pushed_on: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self) -> None:
        self._handles = [
            module_hooks.register_module_forward_pre_hook(self._enter),
            module_hooks.register_module_forward_hook(self._leave, always_call=True),
        ]
        self._hooks.__enter__()
        self._pushed_on = threading.current_thread()
        torch.autograd.graph.disable_saved_tensors_hooks = self._step_aside  # type: ignore[assignment]
        self.active = True

    def stop(self) -> None:
        """Counting ends now; our saved-tensor hooks come off when this runs on the thread that
        pushed them (from another thread they stay, not counting, until the session's stop)."""
        if self.active:
            self.active = False
            for handle in self._handles:
                handle.remove()
            self._handles = []
            self.graph_released()
        if self._pushed_on is threading.current_thread():
            self._pushed_on = None
            torch.autograd.graph.disable_saved_tensors_hooks = self._disable_hooks
            if not self._aside:  # else our hooks are off the stack already
                self._hooks.__exit__(None, None, None)

    def graph_released(self) -> None:
        """A backward finished: its saved tensors are freed; keep the largest set seen."""
        total = sum(size for size, _ in self.saved.values())
        if total > self.best_total:
            self.best, self.best_total = self.saved, total
        self.saved = {}

    @contextlib.contextmanager
    def _step_aside(self, error_message: str):
        """disable_saved_tensors_hooks with our hooks taken off for its duration."""
        top = torch._C._autograd._top_saved_tensors_default_hooks(True)
        ours = top is not None and top[0] == self._pack  # this thread's stack: ours on top
        if ours:
            torch._C._autograd._pop_saved_tensors_default_hooks()
            self._aside += 1
        try:
            with self._disable_hooks(error_message):
                yield
        finally:
            if ours:
                self._aside -= 1
                if self._pushed_on is threading.current_thread():  # not stopped meanwhile
                    torch._C._autograd._push_saved_tensors_default_hooks(self._pack, _unpack)

    # -- hooks --------------------------------------------------------------------------------
    def _enter(self, module, args) -> None:
        if torch.compiler.is_compiling():  # traced by dynamo: our bookkeeping is not its graph
            return
        if type(module).__name__ == "OptimizedModule":  # torch.compile: leave it alone
            self.compiled = True
            self.stop()
            return
        if not self.stack and id(module) not in self.names:
            self._name_tree(module)
        if id(module) not in self.inputs:
            self.inputs[id(module)] = _input_bytes(args)
        self.stack.append(module)

    def _leave(self, module, args, output) -> None:
        if torch.compiler.is_compiling():
            return
        while self.stack:  # a forward that raised may have left inner modules on the stack
            if self.stack.pop() is module:
                break

    def _name_tree(self, root: torch.nn.Module) -> None:
        self.root_labels[id(root)] = _program_name(root) or type(root).__name__
        for name, module in root.named_modules():
            depth = name.count(".") + 1 if name else 0
            has_children = next(module.children(), None) is not None
            entry = (name, type(module).__name__, depth, has_children, id(root))
            self.names.setdefault(id(module), entry)
        for tensor in (*root.parameters(), *root.buffers()):
            try:
                self.parameter_storages.add(_storage_key(tensor))
            except (RuntimeError, NotImplementedError):  # torch.func's wrappers have no storage
                continue

    def _pack(self, tensor):
        if not self.active or getattr(_OURS, "depth", 0):  # stopped from another thread
            return tensor
        try:
            key = _storage_key(tensor)
            if key not in self.saved and key not in self.parameter_storages:
                owners = tuple(id(m) for m in self.stack)
                self.saved[key] = (tensor.untyped_storage().nbytes(), owners)
        except (RuntimeError, NotImplementedError):  # tensors without storage (sparse, meta)
            pass
        return tensor

    # -- result -------------------------------------------------------------------------------
    def total_bytes(self) -> int:
        return max(self.best_total, sum(size for size, _ in self.saved.values()))

    def by_module(self) -> list[ModuleActivations]:
        current = sum(size for size, _ in self.saved.values())
        saved = self.saved if current > self.best_total else self.best
        totals: dict[int, int] = {}
        outside = 0
        for size, owners in saved.values():
            if not owners:
                outside += size
            for owner in set(owners):
                totals[owner] = totals.get(owner, 0) + size
        result = []
        labels = self._labels_where_names_clash([self.names[o] for o in totals if o in self.names])
        for owner, size in totals.items():
            name, class_name, depth, has_children, root = self.names.get(
                owner, ("", "?", 0, False, 0)
            )
            inputs = self.inputs.get(owner, 0)
            label = labels.get(root, "")
            if label:
                name = f"{label}.{name}" if name else label
            result.append(
                ModuleActivations(name, class_name, size, depth, has_children, inputs, label)
            )
        if outside:
            result.append(ModuleActivations("", OUTSIDE, outside, 0))
        result.sort(key=lambda m: (-m.bytes, m.depth, m.name))
        return result[:MAX_MODULES]

    def _labels_where_names_clash(self, entries: list) -> dict[int, str]:
        """{root id: its label} when modules of two roots have the same name (each root's
        `model`, MUNIT's encoders and decoders): every root's names are then qualified by it.
        Labels alike (two roots of one name) are told apart by a count."""
        roots_of: dict[str, set[int]] = {}
        for name, _, _, _, root in entries:
            if name:
                roots_of.setdefault(name, set()).add(root)
        if not any(len(roots) > 1 for roots in roots_of.values()):
            return {}
        labels: dict[int, str] = {}
        taken: dict[str, int] = {}
        for root in sorted({entry[4] for entry in entries}, key=list(self.root_labels).index):
            label = self.root_labels.get(root, "model")
            taken[label] = taken.get(label, 0) + 1
            labels[root] = label if taken[label] == 1 else f"{label}#{taken[label]}"
        return labels


def _program_name(root: torch.nn.Module) -> str:
    """The name the program's code calling the root model has for it: a variable of its frame
    (local first, then global), or an attribute of one (`self.gen_a`); "" when none."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and is_library_file(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return ""
    for scope in (frame.f_locals, frame.f_globals):
        for name, value in list(scope.items()):
            if value is root:
                return name
    owner = frame.f_locals.get("self")
    for name, value in list(getattr(owner, "__dict__", {}).items()):
        if value is root:
            return f"self.{name}"
    for name, value in list(getattr(owner, "_modules", {}).items()):
        if value is root:
            return f"self.{name}"
    return ""


def _unpack(tensor):
    return tensor


def _input_bytes(args) -> int:
    storages = {}
    for arg in args:
        if isinstance(arg, torch.Tensor):
            try:
                storages[_storage_key(arg)] = arg.untyped_storage().nbytes()
            except (RuntimeError, NotImplementedError):
                continue
    return sum(storages.values())


def _storage_key(tensor: torch.Tensor) -> tuple:
    storage = tensor.untyped_storage()
    return (tensor.device.type, tensor.device.index, storage.data_ptr())
