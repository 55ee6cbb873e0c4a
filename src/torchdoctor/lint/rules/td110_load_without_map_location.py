"""TD110: `torch.load` without `map_location`."""

from __future__ import annotations

import re

import libcst as cst

from torchdoctor.lint.checkpoints import (
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
    saves earlier in the same function (a reload in the same process, on the same devices), or
    loads after a training loop of the same function (the best checkpoint the run just wrote) or
    names the same checkpoint file as such a reload, or that a program which never leaves the
    CPU (no device string, `.cuda()`, `.to(device)`, accelerator library) saves itself;
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
    saves = saves_of_same_file(ctx, call)
    if any(saved_from_cpu(ctx, save) or saved_earlier_in_scope(ctx, save, call) for save in saves):
        return True
    if _reloads_after_training(ctx, call) or _same_file_as_a_reload(ctx, call):
        return True
    if any(True for _ in ctx.calls_to(*_SAVES)) and _stays_on_cpu(ctx):
        return True
    return loaded_into_numpy(ctx, call) or sibling_branch_sets(ctx, call, "map_location", 1)


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


_SAVES = ("torch.save",)
_ACCELERATOR_TEXT_RE = re.compile(
    r"""["'](cuda|mps|xpu|npu)|\b(accelerate|lightning|deepspeed|fabric)\b""", re.IGNORECASE
)


def _stays_on_cpu(ctx) -> bool:
    """Nothing in the file leaves the CPU: no device string or accelerator library, no
    `.cuda()`, no `.to(...)`/`device=` other than `"cpu"`, a dtype or another tensor's
    `.device`. The state dicts such a program saves itself hold CPU tensors."""
    if _ACCELERATOR_TEXT_RE.search(ctx.source):
        return False
    for node in ctx.index.calls:
        if method_call(node, "cuda"):
            return False
        if method_call(node, "to") and not all(_stays(a.value) for a in node.args):
            return False
        device = argument(node, "device", 99)
        if device is not None and not _stays(device):
            return False
    return True


def _stays(value: cst.BaseExpression) -> bool:
    """`"cpu"`, `torch.float32`, `x.device`, `x.dtype`: a `.to()` argument that moves nothing
    off the CPU."""
    if isinstance(value, cst.SimpleString):
        return value.evaluated_value == "cpu"
    return isinstance(value, cst.Attribute) and (
        value.attr.value in ("device", "dtype") or value.attr.value.startswith(("float", "int"))
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
