"""TD107: an evaluation function that never puts the model in eval mode."""

from __future__ import annotations

import io
import re
import sys
import tokenize
from functools import lru_cache
from pathlib import Path

import libcst as cst
import libcst.helpers

from torchdoctor.lint.modules import is_nn_class
from torchdoctor.lint.patterns import (
    calls_backward,
    calls_model,
    grad_context_name,
    is_model_like,
    is_plain_function,
    method_call,
    terminal_name,
    walk,
)
from torchdoctor.lint.rule import Rule

EVAL_FUNCTION_RE = re.compile(
    r"^(evaluate|validate|validation|predict|infer|inference)(_\w+)?$|^(eval|val|test)$"
    # `val_epoch`, `eval_loop`, `val_coroutine`; not `test_*` (pytest's test functions)
    r"|^(eval|val|valid)_\w+$"
)


def _sets_eval_mode(ctx, node: cst.CSTNode) -> bool:
    """`.eval()`, `.train(False)`, or a helper named for it (`with eval_mode(model):`)."""
    for child in walk(ctx, node):
        if method_call(child, "eval"):
            return True
        if isinstance(child, cst.Call) and "eval" in (terminal_name(child.func) or "").lower():
            return True
        if (
            isinstance(child, cst.Call)
            and method_call(child, "train")
            and child.args
            and terminal_name(child.args[0].value) == "False"
        ):
            return True
    return False


def _grad_off(ctx, item: cst.BaseExpression) -> bool:
    """`torch.no_grad()`, `torch.inference_mode()`, `torch.set_grad_enabled(False)`."""
    name = grad_context_name(ctx, item)
    if name in ("torch.no_grad", "torch.inference_mode"):
        return True
    return (
        name == "torch.set_grad_enabled"
        and isinstance(item, cst.Call)
        and bool(item.args)
        and terminal_name(item.args[0].value) == "False"
    )


def _grad_off_decorated(ctx, function: cst.FunctionDef) -> bool:
    """`@torch.inference_mode()` / `@torch.no_grad()` on a function: it runs the model for its
    outputs only (scoring, sampling), whatever its name (`score(model, x, y)`)."""
    return any(_grad_off(ctx, decorator.decorator) for decorator in function.decorators)


# layers that behave differently in training mode
_MODE_DEPENDENT = tuple(
    [f"torch.nn.{kind}" for kind in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d")]
    + ["torch.nn.AlphaDropout", "torch.nn.FeatureAlphaDropout"]
    + [f"torch.nn.BatchNorm{d}d" for d in (1, 2, 3)]
    + [f"torch.nn.functional.{f}" for f in ("dropout", "dropout1d", "dropout2d", "dropout3d")]
)


def _has_mode_dependent_layers(ctx) -> bool:
    """The file builds dropout or BatchNorm layers (or calls functional dropout)."""
    return next(ctx.calls_to(*_MODE_DEPENDENT), None) is not None


def _model_is_callers(ctx, function: cst.FunctionDef) -> bool:
    """The function receives the model as a parameter and nothing in this file calls it: a
    library helper whose callers (in other files) choose the mode."""
    params = {p.name.value for p in function.params.params}
    if not any(is_model_like(ctx, cst.Name(p)) for p in params if _MODEL_PARAM_RE.search(p)):
        return False
    return not any(terminal_name(c.func) == function.name.value for c in ctx.index.calls)


def _method_of_a_module(ctx, function: cst.FunctionDef) -> bool:
    """A method of an `nn.Module` subclass (Tacotron's `Decoder.inference`): the module is the
    model, and whoever calls it chooses its mode; a module does not switch its own."""
    block = ctx.parent(function)
    owner = ctx.parent(block) if block is not None else None
    return isinstance(owner, cst.ClassDef) and _is_module_class(ctx, owner, set())


def _is_module_class(ctx, klass: cst.ClassDef, seen: set[str]) -> bool:
    """`klass` derives from `torch.nn.Module` (or a `torch.nn` layer), directly or through
    classes of this file."""
    seen.add(klass.name.value)
    local = {c.name.value: c for c in ctx.index.classes}
    for base in klass.bases:
        name = ctx.qualified_name(base.value) or ""
        if name == "torch.nn.Module" or is_nn_class(name):
            return True
        parent = local.get(terminal_name(base.value) or "")
        if parent is not None and parent.name.value not in seen:
            if _is_module_class(ctx, parent, seen):
                return True
    return False


_MODEL_PARAM_RE = re.compile(r"(model|net|network|module)$", re.IGNORECASE)

# Words that name a layer whose output depends on train/eval mode (or a block built of them).
_MODE_WORDS_RE = re.compile(
    r"[Dd]ropout|BatchNorm|batch_norm|InstanceNorm|Transformer|Multihead|LSTM|GRU|RNN"
)
# Modules that build no layers (what they import is read as text when it is the project's own).
_NO_LAYERS = {"torch", "numpy", "pandas", "scipy", "sklearn", "matplotlib", "tqdm", "PIL"}
# Submodules of model libraries that build no layers (torchvision's models are in `.models`).
_NO_LAYER_SUBMODULES = [["torchvision", part] for part in ("datasets", "transforms", "utils", "io")]
_PACKAGES_OF_SUBMODULES = {"torchvision"}


def _no_mode_dependent_layers(ctx) -> bool:
    """Neither this file nor any module of the project it imports (a sibling `model.py`, a
    package beside it) names dropout, BatchNorm or a block that has them, and it imports no
    other library that could build the model: eval mode would change nothing."""
    if _MODE_WORDS_RE.search(_code_only(ctx.source)) or not ctx.path:
        return False
    folder = Path(ctx.path).resolve().parent
    roots = [folder, *list(folder.parents)[:2]]
    for statement in [*ctx.index.import_froms, *ctx.index.imports]:
        for module in _imported_modules(statement):
            top = module.split(".")[0]
            if module == ".":
                return False
            if top in _NO_LAYERS or top in sys.stdlib_module_names or top == "__future__":
                continue
            if module.split(".")[:2] in _NO_LAYER_SUBMODULES:
                continue
            local = _local_module(roots, module)
            if local is None:
                return False
            try:
                text = local.read_text(encoding="utf-8", errors="replace")
            except OSError:
                return False
            if _MODE_WORDS_RE.search(_code_only(text)):
                return False
    return True


@lru_cache(maxsize=64)
def _code_only(text: str) -> str:
    """`text` without its comments and docstrings (a docstring that says "no Dropout" builds
    none); the text itself when it does not tokenize."""
    kept: list[str] = []
    statement_start = True
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
                statement_start = True
                continue
            if token.type in (tokenize.COMMENT, tokenize.NL):
                continue
            if not (token.type == tokenize.STRING and statement_start):
                kept.append(token.string)
            statement_start = False
    except (tokenize.TokenError, SyntaxError):
        return text
    return " ".join(kept)


def _imported_modules(statement) -> list[str]:
    if isinstance(statement, cst.ImportFrom):
        if statement.module is None or statement.relative:
            return ["."]  # the project's own module, not followed: answers "may have them"
        module = cst.helpers.get_full_name_for_node(statement.module) or "?"
        if module in _PACKAGES_OF_SUBMODULES and not isinstance(statement.names, cst.ImportStar):
            # `from torchvision import datasets, transforms`: the submodules it names
            return [f"{module}.{alias.name.value}" for alias in statement.names]
        return [module]
    return [cst.helpers.get_full_name_for_node(alias.name) or "?" for alias in statement.names]


def _local_module(roots: list[Path], module: str) -> Path | None:
    parts = module.split(".")
    for root in roots:
        for candidate in (
            root.joinpath(*parts).with_suffix(".py"),
            root.joinpath(*parts, "__init__.py"),
        ):
            if candidate.is_file():
                return candidate
    return None


class EvalWithoutModelEval(Rule):
    """
    ## What it does
    Flags a function named like an evaluation (`evaluate`, `validate`, `predict`, `test`, `val_*`...)
    or, in a file that builds dropout or BatchNorm layers, decorated with `@torch.no_grad()` /
    `@torch.inference_mode()`
    that calls a model inside a loop (or, in a file whose model has dropout or BatchNorm
    layers, once on a whole batch or graph without any backward) but never calls `.eval()`,
    `.train(False)` or a helper named for it (`with eval_mode(model):`), when no call of it
    in the same file comes after an `.eval()` call or after a call of a function that leaves
    the model in eval mode (`test()` switches to eval and nothing switches back). A helper that
    receives the model as a
    parameter and is not called in its own file is left to its callers, and so is a file whose
    model can have no dropout or BatchNorm (neither the file's code nor that of the project
    modules it imports names one, comments and docstrings aside, and it imports no other model
    library; torchvision's datasets and transforms
    build none). Methods are left alone for a single call (frameworks such as
    Lightning switch modes around `validation_step`), and a method of an `nn.Module` subclass
    (a decoder's own `inference()` loop) always: whoever calls the module chooses its mode.
    Also flags an evaluation written inline: a
    `with torch.no_grad():` / `torch.inference_mode():` block inside a training loop that runs
    the model, in a file with dropout or BatchNorm layers that never calls `.eval()` or
    `.train(...)`.

    ## Why is this bad
    In training mode dropout stays active and BatchNorm normalizes with batch statistics and
    updates its running averages, so metrics are noisy and wrong, and evaluation changes the
    model.

    ## Example
    ```python
    def evaluate(model, loader):
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
    ```

    ## Use instead
    ```python
    def evaluate(model, loader):
        model.eval()
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
    ```

    ## Fix safety
    No automatic fix: the caller may expect the model back in training mode afterwards.
    """

    code = "TD107"
    name = "eval-without-model-eval"
    level = "error"

    def check(self, ctx):
        yield from self._inline_evaluations(ctx)
        mode_dependent = _has_mode_dependent_layers(ctx)
        for function in ctx.index.functions:
            name = function.name.value
            evaluation = EVAL_FUNCTION_RE.match(name) or (
                mode_dependent and _grad_off_decorated(ctx, function)
            )
            if not evaluation or _sets_eval_mode(ctx, function.body):
                continue
            loops = [n for n in walk(ctx, function.body) if isinstance(n, (cst.For, cst.While))]
            in_loop = any(calls_model(ctx, loop.body) for loop in loops)
            if not in_loop and not (
                mode_dependent
                and is_plain_function(ctx, function)
                and calls_model(ctx, function.body, direct=True)
                and not calls_backward(ctx, function.body)
            ):
                continue
            if _model_is_callers(ctx, function) or _no_mode_dependent_layers(ctx):
                continue
            if _method_of_a_module(ctx, function):
                continue
            if self._called_after_eval(ctx, name):
                continue
            yield ctx.violation(
                self,
                function.name,
                f"`{name}()` runs the model without calling `model.eval()`; "
                "dropout and BatchNorm stay in training mode",
            )

    def _inline_evaluations(self, ctx):
        """`with torch.no_grad():` (or `inference_mode()`) blocks inside a training loop that run
        the model, in a file with dropout/BatchNorm layers that never switches any mode."""
        if not _has_mode_dependent_layers(ctx) or any(
            method_call(call, "eval", "train") or "eval_mode" in (terminal_name(call.func) or "")
            for call in ctx.index.calls
        ):
            return
        for block in ctx.index.withs:
            if not any(_grad_off(ctx, item.item) for item in block.items):
                continue
            function = ctx.enclosing(block, cst.FunctionDef)
            if function is not None and EVAL_FUNCTION_RE.match(function.name.value):
                continue  # the function-level check reports it
            loop = ctx.enclosing(block, (cst.For, cst.While))
            if loop is None or not calls_backward(ctx, loop.body):
                continue
            if calls_model(ctx, block.body, direct=True):
                yield ctx.violation(
                    self,
                    block,
                    "evaluation inside the training loop runs the model without "
                    "`model.eval()`; dropout and BatchNorm stay in training mode",
                )

    @staticmethod
    def _called_after_eval(ctx, name: str) -> bool:
        """A call of `name` comes after `.eval()`, or after a call of a function of this file
        that leaves the model in eval mode (`test(model)` before `predict(x)`)."""
        leaving_eval = _functions_leaving_eval(ctx)
        for call in ctx.index.calls:
            if terminal_name(call.func) != name:
                continue
            container = ctx.enclosing(call, cst.FunctionDef) or ctx.module
            call_line = ctx.line(call)
            for node in walk(
                ctx, container if isinstance(container, cst.Module) else container.body
            ):
                if not isinstance(node, cst.Call) or ctx.line(node) >= call_line:
                    continue
                if method_call(node, "eval") or terminal_name(node.func) in leaving_eval:
                    return True
        return False


def _functions_leaving_eval(ctx) -> set[str]:
    """Functions of this file whose last mode switch is `.eval()` (or `.train(False)`)."""
    names = set()
    for function in ctx.index.functions:
        switches = [
            node
            for node in walk(ctx, function.body)
            if isinstance(node, cst.Call) and method_call(node, "eval", "train")
        ]
        if not switches:
            continue
        last = max(switches, key=ctx.line)
        if method_call(last, "eval") or (
            last.args and terminal_name(last.args[0].value) == "False"
        ):
            names.add(function.name.value)
    return names
