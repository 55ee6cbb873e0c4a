"""What keeps memory alive: tensors of earlier steps still referenced later.

Each step's loss (the tensor passed to backward(), not a copy), the loss's terms (the other
scalars with a graph among the variables of the function that calls backward(): a multi-task
`losses = {"cls": ..., "reg": ...}`) and the model's output are held by weak references, which
cost nothing and keep nothing alive. At a few checks during the run (while
the program's frames still exist) we count how many of them outlived their step by more than one
step: a `losses.append(loss)` keeps every step's loss and, with it, its autograd graph. The first
time that happens the holder is looked up once (gc referrers, then a variable bound to it in the
user's frames), which is the only costly part and runs at most once. The same checks read the
size of the tensors among the training loop's variables: one larger at every check, by about the
same number of elements per step, is a history rebuilt from itself every step (`seen =
torch.cat([seen, batch])`), whose cost grows with the run (D504).
"""

from __future__ import annotations

import gc
import inspect
import itertools
import linecache
import re
import sys
import weakref
from collections import deque
from dataclasses import dataclass
from types import FrameType

import torch

from torchdoctor.diagnose.callsite import is_library_file
from torchdoctor.diagnose.observations import GrowingTensor, RetainedTensors
from torchdoctor.diagnose.source_lines import short_path
from torchdoctor.process_memory import heap_in_use_bytes

MAX_NODES = 20_000  # autograd nodes walked per graph at most
GRAPH_STEPS = 3  # a graph this many times the step's own loss graph spans several steps
MAX_REFS = 64  # weak references kept per kind (older steps beyond it are thinned out)
MIN_ALIVE = 3  # earlier steps whose tensors must still be alive to call it a retention
RECENT = 1  # the previous step's tensors may legitimately be alive (`prev_loss = loss`)
RECENT_LOSSES = 8  # backward() calls whose losses a graph is compared with
MAX_TERM_ITEMS = 16  # items of a container variable looked at for loss terms
# a growing history: larger at this many checks in a row (checks come at the 2nd, 4th, 8th...
# measured step), by a number of elements per step that stays within GROWTH_RATE_RATIO between
# checks (a history grows by its batch every step; a tensor whose size follows the data, a
# bucketed batch of tokens, does not double and double again in step with the checks), ending at
# least MIN_GROWTH times its size at the first of them
MIN_GROWING_CHECKS = 3
GROWTH_RATE_RATIO = 2.0
MIN_GROWTH = 2.0


@dataclass
class _Ref:
    step: int
    ref: weakref.ref
    location: str


class RetentionWatch:
    def __init__(self) -> None:
        self.refs: dict[str, list[_Ref]] = {"loss": [], "term": [], "output": []}
        # the loss terms of the last backward(): a term seen again is not this step's (a scalar
        # made before the loop)
        self.last_terms: set[int] = set()
        self.found: dict[str, RetainedTensors] = {}
        # kind -> (the container holding them, its name): looked up once; dropped at the end
        self.holders: dict[str, tuple[object, str]] = {}
        # the last few losses passed to backward(), several per step where a step has several
        # (SAC: critic, actor and temperature losses)
        self.recent_losses: deque[weakref.ref] = deque(maxlen=RECENT_LOSSES)
        # loop variable -> (check step, numel, bytes) of the tensor bound to it at each check
        self.sizes: dict[str, list[tuple[int, int, int]]] = {}
        self.growing: dict[str, GrowingTensor] = {}
        # (the function's file, its first line, loop variable) -> autograd nodes of its graph at
        # the last reading (check_graphs): two functions' `a` are two variables
        self.graph_nodes: dict[tuple[str, int, str], int] = {}
        # (step, bytes the C heap has in use) at each check: beside the resident memory read
        # every step, whether the tensors alive grew or only the allocator's high-water mark
        self.heap_in_use: list[tuple[int, int]] = []

    def loss_passed(self, loss) -> None:
        """A loss on its way into backward() (every one: `remember` is told of a subset)."""
        try:
            self.recent_losses.append(weakref.ref(loss))
        except TypeError:
            pass

    def remember(self, kind: str, step: int, tensor, location: str) -> None:
        refs = self.refs[kind]
        if refs and refs[-1].step == step:
            return  # one per step is enough
        if len(refs) >= MAX_REFS:
            del refs[1::2]  # keep every other one: the span of steps stays covered
        try:
            refs.append(_Ref(step, weakref.ref(tensor), location))
        except TypeError:
            pass

    def remember_terms(self, step: int, loss: torch.Tensor, location: str) -> None:
        """The scalars with a graph, other than `loss`, among the variables of the user's function
        that calls backward() (and the values of its dicts, lists and tuples): the loss's terms.
        One per step is remembered, the first not seen at the previous backward()."""
        terms_refs = self.refs["term"]
        if terms_refs and terms_refs[-1].step == step:
            return  # a second backward() in the step (a GAN's): one per step is enough
        frame = _user_frame()
        if frame is None:
            return
        terms = [t for t in _scalars_with_graph(frame.f_locals.values()) if t is not loss]
        seen, self.last_terms = self.last_terms, {id(t) for t in terms}
        fresh = [t for t in terms if id(t) not in seen]
        if fresh:
            self.remember("term", step, fresh[0], location)

    def check(self, current_step: int) -> None:
        """Count earlier steps' tensors still alive; describe them the first time. Read the heap's
        bytes in use."""
        in_use = heap_in_use_bytes()
        if in_use is not None:
            self.heap_in_use.append((current_step, in_use))
        for kind, refs in self.refs.items():
            earlier = [r for r in refs if r.step < current_step - RECENT]
            alive: list[tuple[_Ref, torch.Tensor]] = []
            for r in earlier:
                tensor = r.ref()
                if tensor is not None:
                    alive.append((r, tensor))
            if len(alive) < MIN_ALIVE or len(alive) < len(earlier) / 2:
                continue
            tensors = [t for _, t in alive]
            if kind not in self.holders:
                self.holders[kind] = _holder(tensors[-1])
            container, name = self.holders[kind]
            holder = ""
            if container is not None:
                named = f" `{name}`" if name else ""
                holder = f"{type(container).__name__}{named} ({len(container)} items)"  # type: ignore[arg-type]
            self.found[kind] = RetainedTensors(
                kind=kind,
                steps_alive=len(alive),
                steps_checked=len(earlier),
                with_graph=any(t.grad_fn is not None for t in tensors),
                bytes=sum(t.numel() * t.element_size() for t in tensors),
                location=alive[-1][0].location,
                holder=holder,
            )

    def check_graphs(self, current_step: int, baseline: bool = False) -> None:
        """A tensor in the training loop's variables whose autograd graph is several times the
        largest graph of the losses just backpropagated, and has grown by at least one loss
        graph since an earlier reading of the same variable, holds the graphs of earlier steps:
        `total_loss += loss`. The largest loss, not the last: a step's last loss can be a tiny
        one (SAC's temperature loss, 5 nodes) beside a critic's output of 15. Grown, not only
        large: minimalRL's SAC acting `a` (17 nodes through `Normal.rsample` and `tanh`,
        replaced every acting step) beside that 5-node loss is the same size at every reading.
        `baseline`: only read the variables' graph sizes (at the end of the warm-up)."""
        losses = [ref() for ref in self.recent_losses]
        alive = [loss for loss in losses if loss is not None and loss.grad_fn is not None]
        if not alive and not baseline:
            return
        frame = _user_frame()
        if frame is None:
            return
        candidates = [
            (name, value)
            for name, value in _loop_variables(frame)
            if isinstance(value, torch.Tensor)
            and value.grad_fn is not None
            and not any(value is loss for loss in alive)
        ]
        if not candidates:  # nothing to compare with: the loss graph is not walked (ms on RNNs)
            return
        if baseline:
            for name, value in candidates:
                self.graph_nodes[_variable_key(frame, name)] = _graph_nodes(value.grad_fn)
            return
        own = max(_graph_nodes(loss.grad_fn) for loss in alive)
        if own <= 0:
            return
        for name, value in candidates:
            nodes = _graph_nodes(value.grad_fn)
            key = _variable_key(frame, name)
            before = self.graph_nodes.get(key)
            self.graph_nodes[key] = nodes
            if nodes >= GRAPH_STEPS * own and before is not None and nodes - before >= own:
                self.found["graph"] = RetainedTensors(
                    kind="graph",
                    steps_alive=min(nodes // own, current_step + 1),
                    steps_checked=current_step + 1,
                    with_graph=True,
                    bytes=value.numel() * value.element_size(),
                    location=f"{short_path(frame.f_code.co_filename)}:"
                    f"{_accumulating_line(frame, name) or frame.f_lineno}",
                    holder=f"variable `{name}` ({nodes} autograd nodes, {own} in one step's loss)",
                )
                return

    def check_growth(self, current_step: int) -> None:
        """Read the size of every tensor among the training loop's variables; a variable larger
        at every one of the last MIN_GROWING_CHECKS checks, at a steady rate, that the loop's
        function rebuilds from itself (`seen = torch.cat([seen, ...])`) is a growing history."""
        frame = _user_frame()
        if frame is None:
            return
        for name, value in _loop_variables(frame):
            if not isinstance(value, torch.Tensor) or value.is_meta:
                continue
            sizes = self.sizes.setdefault(name, [])
            sizes.append((current_step, value.numel(), value.numel() * value.element_size()))
            growing = _growing_run(sizes)
            # and the source rebuilds it from itself: a tensor that follows the step on purpose
            # (a curriculum's sequence length) is no history
            line = _rebuilding_line(frame, name) if growing is not None else None
            if growing is not None and line is not None:
                (first_step, first_numel, _), (last_step, last_numel, size) = growing
                self.growing[name] = GrowingTensor(
                    name=name,
                    first_step=first_step,
                    last_step=last_step,
                    first_numel=first_numel,
                    last_numel=last_numel,
                    bytes=size,
                    location=f"{short_path(frame.f_code.co_filename)}:{line}",
                )

    def results(self) -> list[RetainedTensors]:
        self.holders.clear()  # the program's containers are not ours to keep alive
        return list(self.found.values())

    def growing_results(self) -> list[GrowingTensor]:
        return list(self.growing.values())


MAX_DICT_ENTRIES = 32  # a metrics dict, not a data set held in a dict


def _variable_key(frame: FrameType, name: str) -> tuple[str, int, str]:
    return frame.f_code.co_filename, frame.f_code.co_firstlineno, name


def _growing_run(sizes: list[tuple[int, int, int]]):
    """(first, last) (step, numel, bytes) of the growth ending at the latest check, when at least
    the last MIN_GROWING_CHECKS checks grew at a steady rate to MIN_GROWTH x; else None. The
    growth is read back from the latest check over as many earlier steady checks as it takes to
    reach MIN_GROWTH x: a history that began before the measured steps can grow by less than
    that between three checks close together (the 8th, 16th and 20th step after a warm-up of 5:
    1.9x), and by more since the checks before them."""
    for start in range(len(sizes) - MIN_GROWING_CHECKS, -1, -1):
        run = sizes[start:]
        if _steady_growth(run) and run[-1][1] >= MIN_GROWTH * run[0][1]:
            return run[0], run[-1]
    return None


def _steady_growth(run: list[tuple[int, int, int]]) -> bool:
    """Larger at every check, by a number of elements per step that stays within
    GROWTH_RATE_RATIO from check to check."""
    rates = []
    for (step0, numel0, _), (step1, numel1, _) in zip(run, run[1:]):
        if numel1 <= numel0 or step1 <= step0:
            return False
        rates.append((numel1 - numel0) / (step1 - step0))
    return max(rates) <= GROWTH_RATE_RATIO * min(rates)


def _rebuilding_line(frame: FrameType, name: str) -> int | None:
    """The line of the frame's function that rebuilds `name` from itself (`name =
    torch.cat([name, ...])`, or stack, hstack, vstack), where the fix goes; None when none."""
    lines, first = _source_of(frame)
    pattern = re.compile(
        rf"^\s*{re.escape(name)}\s*=\s*torch\.(cat|concat|concatenate|stack|hstack|vstack)\(\s*"
        rf"[\[\(]\s*{re.escape(name)}\b"
    )
    for offset, text in enumerate(lines):
        if pattern.match(text):
            return max(first, 1) + offset
    return None


def _source_of(frame: FrameType) -> tuple[list[str], int]:
    """The source lines of the frame's function and the number of its first line ([] when it
    has no source file)."""
    code = frame.f_code
    if code.co_name == "<module>":  # inspect gives a module's first block only: the whole file
        return linecache.getlines(code.co_filename), 1
    try:
        return inspect.getsourcelines(code)
    except (OSError, TypeError):  # no source file (exec'd code, a notebook cell gone)
        return [], 1


def _loop_variables(frame: FrameType) -> list[tuple[str, object]]:
    """The frame's variables and, in a method, its object's attributes (`self.running_loss +=
    loss` in a Trainer class keeps the graphs as a local total would), and the string-keyed
    entries of the small dicts among them (`metrics["loss"] += loss`)."""
    variables = list(frame.f_locals.items())
    owner = frame.f_locals.get("self")
    attributes = getattr(owner, "__dict__", None)
    if isinstance(attributes, dict):
        variables += [(f"self.{name}", value) for name, value in list(attributes.items())]
    entries = [
        (f'{name}["{key}"]', value)
        for name, held in variables
        if type(held) is dict and len(held) <= MAX_DICT_ENTRIES
        for key, value in list(held.items())
        if isinstance(key, str)
    ]
    return variables + entries


def _accumulating_line(frame: FrameType, name: str) -> int | None:
    """The line of the frame's function that adds to `name` (`name += ...` or `name = name +
    ...`), where the fix goes; None when the source has none (then the loop's current line)."""
    lines, first = _source_of(frame)
    spelled = re.escape(name).replace('"', "[\"']")  # metrics["loss"] or metrics['loss']
    pattern = re.compile(rf"^\s*{spelled}\s*(\+=|=\s*{spelled}\s*\+)")
    for offset, text in enumerate(lines):
        if pattern.match(text):
            return max(first, 1) + offset  # a module's code starts at 0
    return None


def _holder(tensor: torch.Tensor) -> tuple[object, str]:
    """The container that references the tensor (a list, dict or set) and, when a user frame
    or module binds it to a name, that name."""
    containers = [r for r in gc.get_referrers(tensor) if isinstance(r, (list, dict, set))]
    containers = [c for c in containers if not _is_namespace(c)]
    if not containers:
        return None, ""
    container = max(containers, key=len)
    return container, _name_of(container)


def _scalars_with_graph(values) -> list[torch.Tensor]:
    """One-element tensors with an autograd graph among `values` and the items of the dicts,
    lists and tuples among them (one level: a history list of lists is not walked)."""
    found = []
    for value in values:
        if isinstance(value, dict):  # a large dict (a vocabulary) is not copied
            items = list(itertools.islice(value.values(), MAX_TERM_ITEMS))
        elif isinstance(value, (list, tuple)):
            items = list(value[-MAX_TERM_ITEMS:])
        else:
            items = [value]
        for item in items:
            # requires_grad and numel first: reading grad_fn makes a Python object per node
            if (
                isinstance(item, torch.Tensor)
                and item.requires_grad
                and item.numel() == 1
                and item.grad_fn is not None
            ):
                found.append(item)
    return found


def _graph_nodes(root) -> int:
    """Autograd nodes reachable from `root`, counted up to MAX_NODES."""
    # the nodes themselves, not their id(): `next_functions` makes a Python object per node,
    # freed once walked past, and the next one can take its address (torch 2.11 on Python
    # 3.12: a graph of 76 nodes counted 5, and `total = total + loss` was never found)
    seen: set[object] = set()
    pending = [root]
    while pending and len(seen) < MAX_NODES:
        node = pending.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        for next_node, _ in getattr(node, "next_functions", ()):
            pending.append(next_node)
    return len(seen)


_LIBRARY_FILES: dict[str, bool] = {}  # file name -> is it library code (looked up per backward)


def _is_library(filename: str) -> bool:
    known = _LIBRARY_FILES.get(filename)
    if known is None:
        known = _LIBRARY_FILES[filename] = is_library_file(filename)
    return known


def _user_frame() -> FrameType | None:
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and _is_library(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def _is_namespace(container) -> bool:
    """A frame's locals or a module's globals, not a user's container."""
    return isinstance(container, dict) and "__name__" in container and "__builtins__" in container


def _name_of(container) -> str:
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if not is_library_file(frame.f_code.co_filename):
            for scope in (frame.f_locals, frame.f_globals):
                for name, value in scope.items():
                    if value is container:
                        return name
                    if hasattr(value, "__dict__") and not isinstance(value, type):
                        for attribute, inner in vars(value).items():
                            if inner is container:
                                return f"{name}.{attribute}"
        frame = frame.f_back
    return ""
