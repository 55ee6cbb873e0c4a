"""TD102: DataLoader that loads in the main process."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.patterns import (
    DATALOADER,
    argument,
    calls_backward,
    has_star_args,
    int_value,
    terminal_name,
    walk,
)
from torchdoctor.lint.rule import Rule

# Datasets that read and decode files, or run transforms, for every item.
_FILE_DATASET_MODULES = ("torchvision.datasets.", "torchaudio.datasets.")
# Calls inside `__getitem__` that read files or decode data (by the resolved name's last part).
_READERS = {
    "open",
    "imread",
    "imdecode",
    "read_image",
    "decode_image",
    "read_file",
    "loadtxt",
    "load_wav",
    "read",
    "load",
    "fromfile",
    "memmap",
}


class DataLoaderNoWorkers(Rule):
    """
    ## What it does
    Flags `DataLoader(...)` without `num_workers` over a dataset whose items cost work to
    produce. That is a `torchvision`/`torchaudio` dataset (files decoded and transformed per
    item), or a `Dataset` class in the same file whose `__getitem__` reads files, decodes data,
    applies a transform, draws random numbers (a random augmentation) or runs several NumPy
    operations (a crop, a normalisation). A loader over data already in memory (a `TensorDataset`, a class that indexes
    tensors or lists built in `__init__`) is left alone: indexing it costs less than sending
    batches between processes. So is an explicit `num_workers=0` (a deliberate choice, often
    on short evaluation loaders), a loader iterated by a single evaluation pass (one loop, in
    no other loop, without `backward()`; `len(loader)` is no pass, one `next(iter(loader))` is
    one), a loader a function or the main block builds and never uses, and a dataset whose
    origin the file does not show. An explicit `num_workers=0` is flagged when the dataset is
    a class of the file that splits its items across workers (`get_worker_info()` in a
    method) and computes each item (in `__getitem__`, or torch/NumPy calls in the loop of
    `__iter__` that yields them): it was written to run in workers, and with none its split
    never runs. Rows already in memory yielded as they are stay cheaper without workers.

    ## Why is this bad
    With no worker processes every batch is loaded and collated in the training process,
    between steps, so the accelerator waits for data. Worker processes prepare the next
    batches while the current step runs.

    ## Example
    ```python
    dataset = torchvision.datasets.ImageFolder(root, transform=augment)
    loader = DataLoader(dataset, batch_size=64, shuffle=True)
    ```

    ## Use instead
    ```python
    loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=4,
                        persistent_workers=True)
    ```

    ## Fix safety
    No automatic fix: the right number of workers depends on the machine, and workers need
    a picklable dataset and an `if __name__ == "__main__":` guard on some platforms.
    """

    code = "TD102"
    name = "dataloader-no-workers"

    def check(self, ctx):
        for call in ctx.calls_to(DATALOADER):
            workers = argument(call, "num_workers", 5)
            if workers is not None and not has_star_args(call):
                sharded = _worker_sharded_class(ctx, argument(call, "dataset", 0))
                if sharded is not None and _is_zero(ctx, workers) and not _iterated_once(ctx, call):
                    yield ctx.violation(
                        self,
                        call,
                        f"`num_workers=0` leaves `{sharded}`'s split across workers "
                        "(`get_worker_info()`) unused: every item is produced in the training "
                        "process; set `num_workers`",
                    )
                continue
            if has_star_args(call):
                continue
            if _iterated_once(ctx, call):
                continue  # one pass after training: workers would save seconds, once
            if _items_cost_work(ctx, argument(call, "dataset", 0)):
                yield ctx.violation(
                    self,
                    call,
                    "`DataLoader` without `num_workers` prepares every item (reading, "
                    "decoding, augmenting) in the training process; set `num_workers`",
                )


def _items_cost_work(ctx, dataset, depth: int = 0) -> bool:
    """The dataset visibly reads files or runs transforms per item."""
    if dataset is None or depth > 2:
        return False
    if isinstance(dataset, cst.Name):
        value = ctx.single_value(dataset)
        return value is not None and _items_cost_work(ctx, value, depth + 1)
    if not isinstance(dataset, cst.Call):
        return False
    name = ctx.call_name(dataset) or ""
    if name.startswith(_FILE_DATASET_MODULES):
        return True
    if name in ("torch.utils.data.Subset", "torch.utils.data.ConcatDataset") and dataset.args:
        return _items_cost_work(ctx, dataset.args[0].value, depth + 1)
    if isinstance(dataset.func, cst.Name):
        dataset_class = _local_class(ctx, dataset.func.value)
        return dataset_class is not None and _getitem_does_work(ctx, dataset_class)
    return False


def _worker_sharded_class(ctx, dataset) -> str | None:
    """The name of the dataset's class, defined in this file, when it splits its items across
    DataLoader workers (`get_worker_info()` in one of its methods): written to run in workers."""
    if isinstance(dataset, cst.Name):
        dataset = ctx.single_value(dataset)
    if not (isinstance(dataset, cst.Call) and isinstance(dataset.func, cst.Name)):
        return None
    dataset_class = _local_class(ctx, dataset.func.value)
    if dataset_class is None:
        return None
    splits = any(
        isinstance(node, cst.Call) and (ctx.call_name(node) or "").endswith(".get_worker_info")
        for node in walk(ctx, dataset_class.body, skip_functions=False)
    )
    if splits and (
        _getitem_does_work(ctx, dataset_class) or _yields_computed_items(ctx, dataset_class)
    ):
        return dataset_class.name.value
    return None


def _yields_computed_items(ctx, dataset_class: cst.ClassDef) -> bool:
    """The class's `__iter__` computes each item it yields (torch or NumPy calls, a read, a
    random draw in the loop that yields), rather than yielding rows already in memory."""
    for statement in dataset_class.body.body:
        if not (isinstance(statement, cst.FunctionDef) and statement.name.value == "__iter__"):
            continue
        for loop in walk(ctx, statement.body):
            if not isinstance(loop, (cst.For, cst.While)):
                continue
            body = list(walk(ctx, loop.body))
            if not any(isinstance(n, cst.Yield) for n in body):
                continue
            if any(
                isinstance(n, cst.Call)
                and (
                    (ctx.call_name(n) or "").startswith(("torch.", "numpy."))
                    or _reads_or_transforms(ctx, n)
                    or _draws_random(ctx, n)
                )
                for n in body
            ):
                return True
    return False


def _is_zero(ctx, value: cst.BaseExpression) -> bool:
    """`0`, or a name the file binds once, to `0`."""
    if isinstance(value, cst.Name):
        value = ctx.single_value(value)
    return value is not None and int_value(value) == 0


def _iterated_once(ctx, call: cst.Call) -> bool:
    """The loader (`name = DataLoader(...)`) is only iterated by loops that sit in no other
    loop, call no `backward()`, and are not in a function called from a loop: a single
    evaluation pass. Any other use of the name (passed on, stored) answers "no"."""
    parent = ctx.parent(call)
    if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1):
        return False
    target = parent.targets[0].target
    if not isinstance(target, cst.Name):
        return False
    passes = 0
    for access in ctx.accesses(target.value, ctx.scope(target)):
        if _builtin_argument(ctx, access.node, "len"):
            continue  # `len(loader)` reads its length; it loads nothing
        if _builtin_argument(ctx, access.node, "iter") and not _in_a_loop(ctx, access.node):
            passes += 1  # `next(iter(loader))` once: one batch
            continue
        loop = ctx.enclosing(access.node, cst.For)
        if (
            loop is None
            or not ctx.is_inside(access.node, loop.iter)
            and loop.iter is not access.node
        ):
            return False
        if ctx.enclosing(loop, _LOOPS) is not None or calls_backward(ctx, loop.body):
            return False
        if _called_in_a_loop(ctx, ctx.enclosing(loop, cst.FunctionDef)):
            return False
        passes += 1
    if passes == 0:  # never used: dead in a function or a main block, else maybe imported
        return ctx.enclosing(call, cst.FunctionDef) is not None or _under_main_guard(ctx, call)
    return passes == 1


def _under_main_guard(ctx, node: cst.CSTNode) -> bool:
    """`node` sits under `if __name__ == "__main__":` (no other module can import it)."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.If) and "__main__" in ctx.code(ancestor.test):
            return True
    return False


def _builtin_argument(ctx, node: cst.CSTNode, builtin: str) -> bool:
    """`node` is the one argument of `len(node)` / `iter(node)`."""
    arg = ctx.parent(node)
    call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    return (
        isinstance(call, cst.Call)
        and ctx.call_name(call) == f"builtins.{builtin}"
        and len(call.args) == 1
    )


def _in_a_loop(ctx, node: cst.CSTNode) -> bool:
    return ctx.enclosing(node, _LOOPS) is not None or _called_in_a_loop(
        ctx, ctx.enclosing(node, cst.FunctionDef)
    )


_LOOPS = (cst.For, cst.While)


def _called_in_a_loop(ctx, function: cst.FunctionDef | None) -> bool:
    if function is None:
        return False
    return any(
        terminal_name(c.func) == function.name.value and ctx.enclosing(c, _LOOPS) is not None
        for c in ctx.index.calls
    )


def _local_class(ctx, name: str) -> cst.ClassDef | None:
    for cls in ctx.index.classes:
        if cls.name.value == name:
            return cls
    return None


def _getitem_does_work(ctx, dataset_class: cst.ClassDef) -> bool:
    for statement in dataset_class.body.body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value == "__getitem__":
            calls = [n for n in walk(ctx, statement.body) if isinstance(n, cst.Call)]
            return (
                any(_reads_or_transforms(ctx, n) for n in calls)
                or any(_draws_random(ctx, n) for n in calls)
                or sum(_array_op(ctx, n) for n in calls) >= _ARRAY_WORK
            )
    return False


# NumPy operations in `__getitem__` that make an item cost work (an augmentation, a resize, a
# normalisation); from this many on, the item is computed rather than looked up.
_ARRAY_WORK = 3
_ARRAY_METHODS = {"astype", "transpose", "reshape", "resize", "clip", "flip", "rot90", "pad"}


def _array_op(ctx, call: cst.Call) -> bool:
    name = ctx.call_name(call) or ""
    if name.startswith(("numpy.", "cv2.", "PIL.", "scipy.")):
        return True
    return isinstance(call.func, cst.Attribute) and call.func.attr.value in _ARRAY_METHODS


def _draws_random(ctx, call: cst.Call) -> bool:
    """A random draw per item (`np.random.rand()`, `random.random()`, `self.rng.integers(...)`):
    a random augmentation, computed for every item."""
    name = ctx.call_name(call) or ""
    if name.startswith(("numpy.random.", "random.")) and ctx.is_imported(call.func):
        return True
    func = call.func
    return (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Attribute)
        and func.value.attr.value in ("rng", "random_state", "generator")
    )


def _reads_or_transforms(ctx, node) -> bool:
    if not isinstance(node, cst.Call):
        return False
    resolved = ctx.call_name(node) or ""
    last = resolved.rsplit(".", 1)[-1] if resolved else ""
    func = node.func
    attr = func.attr.value if isinstance(func, cst.Attribute) else None
    if last in _READERS or (attr is not None and attr in _READERS and ctx.is_imported(func)):
        return True
    # `self.transform(x)`, `self.transforms(x)`: per-item Python work the workers would overlap
    return attr is not None and "transform" in attr.lower()
