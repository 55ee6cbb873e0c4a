"""Fix code for a DataLoader, written as the user's own call with only the fix's settings changed.

The loader probe records the call as written (`LoaderObservation.call_source`). A fix rewrites
that call: every argument the user gave (dataset, batch_size, shuffle, sampler, collate_fn,
worker_init_fn, generator, `**kwargs` ...) is kept as written, the fix's keywords replace or join
them. Without the source (a loader built before the diagnosis, a file we could not read) the fix
shows `...` where the user's other arguments go, never invented settings such as `shuffle=True`.
Pure: ast on a string, no torch.
"""

from __future__ import annotations

import ast
import dataclasses

from torchdoctor.diagnose.observations import LoaderObservation

# torch.utils.data.DataLoader's positional parameters, in order: a positional batch size or
# shuffle flag is rewritten as its keyword, so that a fix's keyword cannot repeat it
POSITIONAL = (
    "dataset", "batch_size", "shuffle", "sampler", "batch_sampler", "num_workers", "collate_fn",
    "pin_memory", "drop_last", "timeout", "worker_init_fn", "multiprocessing_context", "generator",
)  # fmt: skip
ONE_LINE = 88  # longer calls are laid out one argument per line
KEEP_OTHERS = "..."  # the user's other arguments, in a call we could not read


def _parse_call(source: str) -> tuple[ast.Call, str] | None:
    try:
        node = ast.parse(source.strip(), mode="eval").body
    except SyntaxError:
        return None
    return (node, source.strip()) if isinstance(node, ast.Call) else None


def _flat(text: str) -> str:
    """One line, unless a comment inside would then swallow the rest of the call."""
    return text if "#" in text else " ".join(text.split())


def _layout(func: str, arguments: list[str]) -> str:
    line = f"{func}({', '.join(arguments)})"
    if len(line) <= ONE_LINE and "\n" not in line:
        return line
    return func + "(\n" + "".join(f"    {argument},\n" for argument in arguments) + ")"


def rewrite_call(
    loader: LoaderObservation,
    changes: dict[str, str],
    drop: tuple[str, ...] = (),
    fallback_func: str = "DataLoader",
) -> str:
    """The user's loader call with `changes` (keyword -> source) set and `drop` keywords removed."""
    parsed = _parse_call(loader.call_source) if loader.call_source else None
    if parsed is None:  # what the observation knows, the fix's settings, "..." for the rest
        known = {"batch_size": loader.batch_size, "num_workers": loader.num_workers or None}
        settings = {key: str(value) for key, value in known.items() if value is not None}
        settings.update(changes)
        kept = [f"{key}={value}" for key, value in settings.items() if key not in drop]
        return _layout(fallback_func, ["dataset", *kept, KEEP_OTHERS])
    call, source = parsed
    segment = ast.get_source_segment
    func = segment(source, call.func) or fallback_func
    arguments: list[str] = []
    pending = dict(changes)
    named = _callee_name(call.func) == "DataLoader"  # a subclass may take other positionals
    for index, arg in enumerate(call.args):
        text = _flat(segment(source, arg) or "")
        if not named or index == 0 or index >= len(POSITIONAL) or isinstance(arg, ast.Starred):
            arguments.append(text)
        elif POSITIONAL[index] in pending:
            arguments.append(f"{POSITIONAL[index]}={pending.pop(POSITIONAL[index])}")
        elif POSITIONAL[index] not in drop:
            arguments.append(f"{POSITIONAL[index]}={text}")
    for keyword in call.keywords:
        text = segment(source, keyword) or ""
        if keyword.arg is None:  # **kwargs: kept as written
            arguments.append(text)
        elif keyword.arg in pending:
            arguments.append(f"{keyword.arg}={pending.pop(keyword.arg)}")
        elif keyword.arg not in drop:
            arguments.append(_flat(text))  # one line, whatever its layout was
    arguments += [f"{key}={value}" for key, value in pending.items()]
    rewritten = _layout(func, arguments)
    if _parse_call(rewritten) is None:  # compiled before it is shown: never print broken code
        return rewrite_call(dataclasses.replace(loader, call_source=""), changes, drop, func)
    return rewritten


def call_keywords(source: str) -> dict[str, str]:
    """parameter -> value source of a loader call, positionals named (for DataLoader itself; the
    first one, the dataset, for any loader class)."""
    parsed = _parse_call(source)
    if parsed is None:
        return {}
    call, text = parsed

    def value(node: ast.expr) -> str:
        return " ".join((ast.get_source_segment(text, node) or "").split())

    named = _callee_name(call.func) == "DataLoader"
    found = {
        POSITIONAL[i]: value(arg)
        for i, arg in enumerate(call.args[: len(POSITIONAL) if named else 1])
        if not isinstance(arg, ast.Starred)
    }
    found.update({k.arg: value(k.value) for k in call.keywords if k.arg is not None})
    return found


def _callee_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""
