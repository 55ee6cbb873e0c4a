"""TD122: `zero_grad(set_to_none=False)`."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.edits import remove_argument
from torchdoctor.lint.patterns import is_false, keyword, method_call, string_value, walk
from torchdoctor.lint.rule import Rule
from torchdoctor.lint.switches import guarded_off, truth


class ZeroGradSetToNoneFalse(Rule):
    """
    ## What it does
    Flags `optimizer.zero_grad(set_to_none=False)` (and `model.zero_grad(set_to_none=False)`,
    the positional `zero_grad(False)`, `zero_grad(**options)` where a dict of the file says
    `"set_to_none": False`, or `set_to_none=KEEP` where the file's only value for that setting is
    `False`), unless it
    sits under an `if` on a setting the file's defaults leave off (`if self.keep_buffers:` with
    `keep_buffers=False` passed),
    unless the file updates gradients in place (`p.grad += g`, `p.grad /= n`,
    `p.grad.add_(...)`): that code needs the zeros, and `None` would crash it.

    ## Why is this bad
    Filling every gradient with zeros launches a memset per parameter and keeps the gradient
    memory allocated between steps; setting them to `None` (the default since torch 2.0) costs
    nothing, and the next `backward()` allocates them again.

    ## Example
    ```python
    optimizer.zero_grad(set_to_none=False)
    ```

    ## Use instead
    ```python
    optimizer.zero_grad()
    ```

    ## Fix safety
    Unsafe: the fix drops the argument, which changes what the program computes whenever a
    parameter gets no gradient in a step (GANs, multi-task heads, frozen or conditional
    branches). With zeros, the optimizer still updates that parameter: Adam/AdamW keep moving it
    with their moment estimates, SGD with momentum or weight decay keeps changing it. With
    `None`, the optimizer skips it. Code that reads or updates `param.grad` between
    `zero_grad()` and the next `backward()` (`p.grad += ...`, gradient logging) gets `None` and
    can crash. Check for both before accepting the fix.
    """

    code = "TD122"
    name = "zero-grad-set-to-none-false"
    fix_safety = "unsafe"

    def check(self, ctx):
        if _updates_grads_in_place(ctx):
            return
        for call in ctx.index.calls:
            if not method_call(call, "zero_grad"):
                continue
            arg = keyword(call, "set_to_none")
            if arg is None and call.args and call.args[0].keyword is None and not call.args[0].star:
                arg = call.args[0]  # `zero_grad(False)`: the positional form
            if guarded_off(ctx, call):  # a branch the file's defaults skip
                continue
            if arg is None:
                if any(a.star == "**" for a in call.args) and _options_say_keep_zeros(ctx):
                    yield ctx.violation(
                        self,
                        call,
                        "`zero_grad(**options)` gets `set_to_none=False` from the file's options "
                        "and writes zeros into every gradient; let it set them to `None`",
                    )
                continue
            if is_false(arg.value) or truth(ctx, arg.value) is False:
                fix = ctx.make_fix(
                    self.fix_safety, "Drop `set_to_none=False`", {call: remove_argument(call, arg)}
                )
                yield ctx.violation(
                    self,
                    call,
                    "`zero_grad(set_to_none=False)` writes zeros into "
                    "every gradient; let it set them to `None`",
                    fix,
                )


def _options_say_keep_zeros(ctx) -> bool:
    """A dict literal of the file has the entry `"set_to_none": False` (the options a
    `zero_grad(**cfg["zero_grad"])` call unpacks), outside a branch the defaults skip."""
    for node in walk(ctx, ctx.module, skip_functions=False):
        if not isinstance(node, cst.Dict) or guarded_off(ctx, node):
            continue
        for entry in node.elements:
            if (
                isinstance(entry, cst.DictElement)
                and string_value(entry.key) == "set_to_none"
                and (is_false(entry.value) or truth(ctx, entry.value) is False)
            ):
                return True
    return False


_IN_PLACE_METHODS = ("add_", "sub_", "mul_", "div_", "copy_", "addcmul_", "addcdiv_", "zero_")


def _updates_grads_in_place(ctx) -> bool:
    """`x.grad += g` (any augmented assignment) or `x.grad.add_(g)` anywhere in the file."""
    for node in ctx.index.aug_assigns:
        if isinstance(node.target, cst.Attribute) and node.target.attr.value == "grad":
            return True
    for call in ctx.index.calls:
        if method_call(call, *_IN_PLACE_METHODS):
            receiver = call.func.value
            if isinstance(receiver, cst.Attribute) and receiver.attr.value == "grad":
                return True
    return False
