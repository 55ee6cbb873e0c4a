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
# fresh loss terms remembered per step, each in its own slot ("term", "term1"...): a VAE's
# reconstruction term comes before its KL term among the variables, and a controller that keeps
# only the KL tensors (`self.kls.append(kl)`) keeps the second one
MAX_TERMS = 4
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
        self.term_step: int | None = None  # the last step whose terms were remembered
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
        refs = self.refs.setdefault(kind, [])
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
        The first MAX_TERMS not seen at the previous backward() are remembered, each in its
        slot (their order among the variables is the same every step)."""
        if self.term_step == step:
            return  # a second backward() in the step (a GAN's): one per step is enough
        frame = _user_frame()
        if frame is None:
            return
        terms = [t for t in _scalars_with_graph(frame.f_locals.values()) if t is not loss]
        seen, self.last_terms = self.last_terms, {id(t) for t in terms}
        fresh = [t for t in terms if id(t) not in seen]
        if fresh:
            self.term_step = step
        for slot, term in enumerate(fresh[:MAX_TERMS]):
            self.remember(f"term{slot or ''}", step, term, location)

    def check(self, current_step: int) -> None:
        """Count earlier steps' tensors still alive; describe them the first time. Read the heap's
        bytes in use."""
        in_use = heap_in_use_bytes()
        if in_use is not None:
            self.heap_in_use.append((current_step, in_use))
        kept_terms = False  # the first slot of terms found at this check is the one told
        for kind, refs in self.refs.items():
            earlier = [r for r in refs if r.step < current_step - RECENT]
            alive: list[tuple[_Ref, torch.Tensor]] = []
            for r in earlier:
                tensor = r.ref()
                if tensor is not None:
                    alive.append((r, tensor))
            if len(alive) < MIN_ALIVE or len(alive) < len(earlier) / 2:
                continue
            if kind.startswith("term"):
                if kept_terms:
                    continue
                kept_terms = True
            tensors = [t for _, t in alive]
            if kind not in self.holders:
                self.holders[kind] = _holder(tensors[-1])
            container, name = self.holders[kind]
            holder = ""
            if container is not None:
                named = f" `{name}`" if name else ""
                holder = f"{type(container).__name__}{named} ({len(container)} items)"  # type: ignore[arg-type]
            told = "term" if kind.startswith("term") else kind
            self.found[told] = RetainedTensors(
                kind=told,
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
        function rebuilds from itself (`seen = torch.cat([seen, ...])`) is a growing history.
        Also the lists the loop appends to (its variables' and its objects' attributes): one
        growing so, whose whole content a line reads into one array every time
        (`torch.quantile(torch.stack(self.norms), 0.9)`), is a history read whole."""
        frame = _user_frame()
        if frame is None:
            return
        for name, value, owner in _growth_candidates(frame):
            size = _size(value)
            if size is None:
                continue
            numel, nbytes, container = size
            sizes = self.sizes.setdefault(name, [])
            sizes.append((current_step, numel, nbytes))
            growing = _growing_run(sizes)
            if growing is None:
                if container:  # a list emptied each epoch, or one that stopped growing
                    self.growing.pop(name, None)
                continue
            # and the source rebuilds it from itself: a tensor that follows the step on purpose
            # (a curriculum's sequence length) is no history; a list only logged is read whole
            # by no line
            if container:
                location = _whole_read_location(frame, name, owner)
            else:
                location = _rebuilding_location(frame, name, owner)
            if location is not None:
                (first_step, first_numel, _), (last_step, last_numel, size_bytes) = growing
                self.growing[name] = GrowingTensor(
                    name=name,
                    first_step=first_step,
                    last_step=last_step,
                    first_numel=first_numel,
                    last_numel=last_numel,
                    bytes=size_bytes,
                    location=location,
                    container=container,
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


def _growth_candidates(frame: FrameType) -> list[tuple[str, object, object]]:
    """(name, value, the object it is an attribute of, or None): the loop's variables (with
    `self`'s attributes) and the attributes of the program's own objects among its variables
    (`clip.history` of an AutoClip helper), whose lists a step can append to."""
    found: list[tuple[str, object, object]] = []
    owner = frame.f_locals.get("self")
    for name, value in _loop_variables(frame):
        found.append((name, value, owner if name.startswith("self.") else None))
    for name, value in list(frame.f_locals.items()):
        if name == "self" or not _is_program_object(value):
            continue
        found += [(f"{name}.{attribute}", inner, value) for attribute, inner in _held_by(value)]
    return found


def _held_by(value: object) -> list[tuple[str, object]]:
    """The attributes of `value` that are lists, deques or tensors."""
    attributes = getattr(value, "__dict__", None)
    if not isinstance(attributes, dict):
        return []
    return [
        (name, inner)
        for name, inner in list(attributes.items())
        if type(inner) in _LISTS or isinstance(inner, torch.Tensor)
    ]


_LISTS = (list, deque)


def _is_program_object(value: object) -> bool:
    """An instance of a class of the program's own files (not a library's, not a class)."""
    if isinstance(value, (type, torch.Tensor, torch.nn.Module)):
        return False
    module = sys.modules.get(type(value).__module__)
    filename = getattr(module, "__file__", None)
    return isinstance(filename, str) and not _is_library(filename)


def _size(value: object) -> tuple[int, int, str] | None:
    """(numel, bytes, container) of a tensor (container ""), or (items, bytes of its tensors,
    "list"/"deque") of a non-empty list of tensors or numbers; None for anything else. A deque
    with a maximum length keeps a window, not a history."""
    if isinstance(value, torch.Tensor):
        return None if value.is_meta else (value.numel(), value.numel() * value.element_size(), "")
    if type(value) not in _LISTS or not value or getattr(value, "maxlen", None) is not None:
        return None
    last = value[-1]  # type: ignore[index]
    items = len(value)  # type: ignore[arg-type]
    if isinstance(last, torch.Tensor):
        return items, items * last.numel() * last.element_size(), type(value).__name__
    if isinstance(last, (int, float)) and not isinstance(last, bool):
        return items, 0, type(value).__name__
    return None


# a call that reads a whole list into one array or one number: `torch.stack(norms)`,
# `torch.tensor(list(history))`, `np.percentile(history, 90)`, `sorted(history)`
_WHOLE_READ = (
    r"(?:\b(?:torch|np|numpy|statistics)\.\w+|(?<![\w.])(?:sum|sorted|max|min))\(\s*"
    r"(?:(?:list|tuple)\(\s*)?{name}\s*[,)]"
)


def _whole_read_location(frame: FrameType, name: str, owner: object) -> str | None:
    """The "file:line" of a line that reads the list `name` whole: in the loop's function as it is
    spelled there, or as `self.<attribute>` in the class of the object that holds it."""
    lines, first = _source_of(frame)
    start = max(first, 1)
    # in the loop's body: at least as deep as the line the step is at (a read after the loop,
    # `np.mean(epoch_losses)` at the epoch's end, is not paid every step)
    current = lines[frame.f_lineno - start] if 0 <= frame.f_lineno - start < len(lines) else ""
    line = _first_match(lines, _WHOLE_READ.format(name=re.escape(name)), _indent(current))
    if line is not None:
        return f"{short_path(frame.f_code.co_filename)}:{start + line}"
    source = _owner_source(owner, name)
    if source is None:
        return None
    lines, first, filename, attribute = source
    appends = re.compile(rf"{attribute}\s*(\.(append|extend)\(|\+=)")
    reads = re.compile(_WHOLE_READ.format(name=attribute))
    # a method that appends to the list and reads it whole: read as often as it grows, every
    # step (a summary method called at the epoch's end reads it whole too, but not every step)
    for method in _methods(lines):
        if any(appends.search(lines[i]) for i in method):
            for i in method:
                if reads.search(lines[i]):
                    return f"{short_path(filename)}:{first + i}"
    return None


def _methods(lines: list[str]) -> list[range]:
    """The line offsets of each function defined in a class's source lines (nested ones within
    their function)."""
    found = []
    for start, text in enumerate(lines):
        if not re.match(r"\s*(async\s+)?def\s", text):
            continue
        depth, end = _indent(text), start + 1
        while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > depth):
            end += 1
        found.append(range(start, end))
    return found


def _first_match(lines: list[str], pattern: str, min_indent: int = 0) -> int | None:
    """The offset of the first line at least `min_indent` deep that matches `pattern`."""
    compiled = re.compile(pattern)
    for offset, text in enumerate(lines):
        if _indent(text) >= min_indent and compiled.search(text):
            return offset
    return None


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def _owner_source(owner: object, name: str) -> tuple[list[str], int, str, str] | None:
    """(source lines, first line, file, `self.<attribute>` as a pattern) of the class of the
    object whose attribute `name` ("tracker.history") is; None without a source."""
    if owner is None or "." not in name:
        return None
    try:
        lines, first = inspect.getsourcelines(type(owner))
        filename = inspect.getsourcefile(type(owner))
    except (OSError, TypeError):
        return None
    if filename is None:
        return None
    return lines, first, filename, re.escape("self." + name.rsplit(".", 1)[1])


def _rebuilding_location(frame: FrameType, name: str, owner: object) -> str | None:
    """The "file:line" that rebuilds the tensor `name` from itself: in the loop's function, or
    as `self.<attribute>` in the class of the object that holds it (`self.history = flat if
    self.history is None else torch.cat([self.history, flat])` in a tracker's method)."""
    line = _rebuilding_line(frame, name)
    if line is not None:
        return f"{short_path(frame.f_code.co_filename)}:{line}"
    source = _owner_source(owner, name)
    if source is None:
        return None
    lines, first, filename, attribute = source
    pattern = rf"^\s*{attribute}\s*=.*\btorch\.{_REBUILDS}\(\s*[\[\(]\s*{attribute}\b"
    offset = _first_match(lines, pattern)
    if offset is None:
        return None
    return f"{short_path(filename)}:{first + offset}"


_REBUILDS = "(cat|concat|concatenate|stack|hstack|vstack)"


def _rebuilding_line(frame: FrameType, name: str) -> int | None:
    """The line of the frame's function that rebuilds `name` from itself (`name =
    torch.cat([name, ...])`, or stack, hstack, vstack), where the fix goes; None when none."""
    lines, first = _source_of(frame)
    spelled = re.escape(name)
    pattern = rf"^\s*{spelled}\s*=\s*torch\.{_REBUILDS}\(\s*[\[\(]\s*{spelled}\b"
    offset = _first_match(lines, pattern)
    return None if offset is None else max(first, 1) + offset


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
