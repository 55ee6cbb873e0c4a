"""TD110: `torch.load` without `map_location`."""

from __future__ import annotations

import re

import libcst as cst

from torchdoctor.lint.checkpoints import (
    cached_in_other_branch,
    loaded_into_model,
    loaded_into_numpy,
    offloads_state_to_cpu,
    saved_earlier_in_scope,
    saved_from_cpu,
    saves_of_same_file,
    sibling_branch_sets,
)
from torchdoctor.lint.patterns import (
    argument,
    calls_backward,
    has_star_args,
    method_call,
    walk,
)
from torchdoctor.lint.rule import Rule


class LoadWithoutMapLocation(Rule):
    """
    ## What it does
    Flags `torch.load(...)` calls that do not pass `map_location` and whose result feeds a
    model or optimizer (into `load_state_dict`, directly or by key, or used as a module): that
    is where tensors saved from a GPU come from. Loads of other data are left alone (the code
    does not show their device), and so is a file this
    program saves itself from CPU (`.cpu()` before `torch.save`, CPU-offloaded state dicts) or
    saves earlier in the same function (a reload in the same process, on the same devices) or
    in the other branch of the `if` that loads it (a cache filled and read on this machine), or
    loads after a training loop of the same function (the best checkpoint the run just wrote) or
    names the same checkpoint file as such a reload, or whose file is the state dict of a model
    the file builds and never moves off the CPU (no `model.to(...)`, `.cuda()`, `device=`),
    also when the file saves one per epoch under an f-string name the load's name fits
    (`f"weights_{epoch}.pt"` and `"weights_10.pt"`);
    files whose content goes to `torch.from_numpy` or NumPy (NumPy data holds no device); and
    the branch of an `if` that leaves `map_location` out while another branch sets it (a
    deliberate choice, usually "load onto the saved GPU").

    ## Why is this bad
    Without it tensors are restored onto the device they were saved from: a checkpoint saved
    on `cuda:0` fails on a CPU-only machine, and in multi-GPU jobs every rank loads its copy
    onto GPU 0, wasting its memory (or running out of it).

    ## Example
    ```python
    checkpoint = torch.load(path)
    ```

    ## Use instead
    ```python
    checkpoint = torch.load(path, map_location=device, weights_only=True)
    ```

    ## Fix safety
    No automatic fix: only the author knows which device the tensors belong on.
    """

    code = "TD110"
    name = "load-without-map-location"

    def check(self, ctx):
        for call in ctx.calls_to("torch.load"):
            if has_star_args(call) or argument(call, "map_location", 1) is not None:
                continue
            if not loaded_into_model(ctx, call) or _device_is_known(ctx, call):
                continue
            yield ctx.violation(
                self,
                call,
                "`torch.load` without `map_location` restores tensors "
                "onto the device they were saved from",
            )


def _device_is_known(ctx, call) -> bool:
    if offloads_state_to_cpu(ctx):
        return True
    # any of the files the program writes is on the device it saved from (TD111, which asks
    # whether the file can be someone else's, matches the exact name only)
    saves = saves_of_same_file(ctx, call, by_pattern=True)
    if any(
        saved_from_cpu(ctx, save)
        or saved_earlier_in_scope(ctx, save, call)
        or cached_in_other_branch(ctx, save, call)
        or _saved_model_stays_on_cpu(ctx, save)
        for save in saves
    ):
        return True
    if _reloads_after_training(ctx, call) or _same_file_as_a_reload(ctx, call):
        return True
    return loaded_into_numpy(ctx, call) or sibling_branch_sets(ctx, call, "map_location", 1)


_DEVICE_METHODS = {"to", "cuda", "to_empty"}
_ACCELERATOR_RE = re.compile(r"\b(accelerate|lightning|deepspeed|fabric|DataParallel)\b")


def _saved_model_stays_on_cpu(ctx, save: cst.Call) -> bool:
    """`torch.save(model.state_dict(), ...)` of a model this file builds (`model = Net()`) and
    never moves: no `model.to(...)`/`.cuda()`, no `device=` in its construction, no accelerator
    library or DataParallel in the file. Its state dict holds CPU tensors."""
    obj = argument(save, "obj", 0)
    if not (isinstance(obj, cst.Call) and method_call(obj, "state_dict") and not obj.args):
        return False
    model = obj.func.value if isinstance(obj.func, cst.Attribute) else None
    if not isinstance(model, cst.Name) or _ACCELERATOR_RE.search(ctx.source):
        return False
    values = ctx.assigned_values(model)
    if not values or not all(_built_on_cpu(ctx, value) for value in values):
        return False
    return not any(
        isinstance(node.func, cst.Attribute)
        and node.func.attr.value in _DEVICE_METHODS
        and isinstance(node.func.value, cst.Name)
        and node.func.value.value == model.value
        for node in ctx.index.calls
    )


def _built_on_cpu(ctx, value: cst.BaseExpression) -> bool:
    """`Net(...)`, `nn.Sequential(...)`: a constructor call with no `device=` (a method call such
    as `Net().to(device)` or a parameter is not known to stay on the CPU)."""
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, (cst.Name, cst.Attribute))
        and not (isinstance(value.func, cst.Attribute) and value.func.attr.value[:1].islower())
        and argument(value, "device", 99) is None
    )


def _reloads_after_training(ctx, call) -> bool:
    """The load comes after a training loop (one that calls `backward()`) of the same function:
    it reads back the best checkpoint this run wrote (an early-stopping helper, often in another
    file, saves it), onto the devices the run trains on."""
    function = ctx.enclosing(call, cst.FunctionDef)
    line = ctx.line(call)
    return any(
        ctx.enclosing(loop, cst.FunctionDef) is function
        and ctx.position(loop).end.line < line
        and calls_backward(ctx, loop.body)
        for loop in ctx.index.loops
    )


_CHECKPOINT_NAME_RE = re.compile(r"[^/\\]+\.(pth|pt|ckpt|bin|tar)$")


def _file_names(ctx, call) -> set[str]:
    """The checkpoint file names (`"checkpoint.pth"`) spelled in the load's path argument."""
    path = argument(call, "f", 0)
    if path is None:
        return set()
    values = [path, *(ctx.assigned_values(path) or [] if isinstance(path, cst.Name) else [])]
    names = set()
    for value in values:
        for node in [value, *walk(ctx, value)]:
            if isinstance(node, cst.SimpleString):
                found = _CHECKPOINT_NAME_RE.search(str(node.evaluated_value))
                if found:
                    names.add(found.group(0))
    return names


def _same_file_as_a_reload(ctx, call) -> bool:
    """The load names the same checkpoint file (`"checkpoint.pth"`) as another load of this file
    that reads it back after training: the file this program writes while training."""
    names = _file_names(ctx, call)
    return bool(names) and any(
        other is not call
        and _reloads_after_training(ctx, other)
        and names & _file_names(ctx, other)
        for other in ctx.calls_to("torch.load")
    )
