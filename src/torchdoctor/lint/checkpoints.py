"""Where a `torch.load` call's file comes from and where its result goes.

TD110 (map_location) and TD111 (weights_only) ask the same questions: did this program save the
file itself, from CPU, in the same scope; does the load sit in the branch that deliberately
leaves an option out; does the loaded value go into `load_state_dict` or into NumPy.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

import libcst as cst

from torchdoctor.lint.patterns import argument, method_call, string_value, walk

_SAVE = "torch.save"
_NUMPY_SINKS = ("torch.from_numpy", "torch.as_tensor")


def _path_keys(ctx, path: cst.BaseExpression | None) -> set[str]:
    """What identifies a file path in the source: its text, and the file-name literal inside
    it (`'{}.pkl'` in `'{}.pkl'.format(epoch)`, `'model.pt'` in `os.path.join(d, 'model.pt')`),
    so a save and a load that differ only in the variable parts still match."""
    if path is None:
        return set()
    opened = _opened_path(ctx, path)
    path = opened if opened is not None else path
    keys = {"".join(ctx.code(path).split())}  # the same call wrapped over lines differently
    if isinstance(path, cst.Attribute) and isinstance(path.value, cst.Name):
        keys.add(path.attr.value)  # `self.snapshot_path` is the `snapshot_path` passed around
    # `out_path = os.path.join(work_dir, "model.pt")`; of a name bound to several paths in turn,
    # the binding the call reads
    value = ctx.single_value(path) or _last_value_before(ctx, path)
    nodes = [path, *walk(ctx, path)] + ([value, *walk(ctx, value)] if value is not None else [])
    for node in nodes:
        text = _literal_text(node)
        name = text.rsplit("/", 1)[-1] if text else ""  # "./model.pt" is "model.pt"
        if "." in name.strip("."):
            keys.add(f"literal:{name}")
    return keys


def _literal_text(node: cst.CSTNode) -> str | None:
    """A string literal's text, also of an f-string without placeholders (`f"./model.pth"`)
    or of the file name an f-string spells after its last placeholder's folder
    (`f"{root}/adj_t.pt"`: `adj_t.pt`)."""
    if isinstance(node, cst.SimpleString):
        return string_value(node)
    if isinstance(node, cst.FormattedString):
        parts = node.parts
        if all(isinstance(part, cst.FormattedStringText) for part in parts):
            return "".join(
                part.value for part in parts if isinstance(part, cst.FormattedStringText)
            )
        last = parts[-1] if parts else None
        if isinstance(last, cst.FormattedStringText) and "/" in last.value:
            return last.value.rsplit("/", 1)[-1]
    return None


def _last_value_before(ctx, name: cst.BaseExpression) -> cst.BaseExpression | None:
    """The value of the last assignment to `name` above it in the same function (`path = ...`
    rebound for each cached file in turn); None when one of its bindings is not a plain
    assignment."""
    if not isinstance(name, cst.Name):
        return None
    line = ctx.line(name)
    function = ctx.enclosing(name, cst.FunctionDef)
    earlier = [
        value
        for value in ctx.assigned_values(name) or []
        if ctx.line(value) < line and ctx.enclosing(value, cst.FunctionDef) is function
    ]
    return max(earlier, key=ctx.line) if earlier else None


def _opened_path(ctx, handle: cst.BaseExpression) -> cst.BaseExpression | None:
    """The path of `with open(path) as handle:`; of the `with` around `handle` when several
    bind the same name (`f` for a download, then `f` for the processed file)."""
    if not isinstance(handle, cst.Name):
        return None
    opened = []
    for with_node in ctx.index.withs:
        for item in with_node.items:
            if (
                item.asname is not None
                and isinstance(item.asname.name, cst.Name)
                and item.asname.name.value == handle.value
                and isinstance(item.item, cst.Call)
                and ctx.call_name(item.item) == "builtins.open"
            ):
                opened.append((with_node, argument(item.item, "file", 0)))
    around = [path for with_node, path in opened if ctx.is_inside(handle, with_node.body)]
    if around:
        return around[-1]  # the innermost: `withs` lists outer blocks first
    return opened[0][1] if opened else None


def saves_of_same_file(ctx, load: cst.Call, by_pattern: bool = False) -> list[cst.Call]:
    """`torch.save(obj, path)` calls in this file that write the file `load` reads (same path
    text, directly or through `with open(path) as f`); with `by_pattern`, also a save whose
    f-string names the load's file with its placeholders filled (`f"w_{epoch}.pt"` writes
    `"w_10.pt"`): one of the files the program writes, not necessarily that one."""
    keys = _path_keys(ctx, argument(load, "f", 0))
    names = {key[len("literal:") :] for key in keys if key.startswith("literal:")}
    return [
        save
        for save in ctx.calls_to(_SAVE)
        if keys & _path_keys(ctx, argument(save, "f", 1))
        or (
            by_pattern
            and any(
                pattern.fullmatch(name)
                for pattern in _name_patterns(ctx, argument(save, "f", 1))
                for name in names
            )
        )
    ]


def _name_patterns(ctx, path: cst.BaseExpression | None) -> list[re.Pattern[str]]:
    """The file names a save's path writes, with its placeholders as wildcards
    (`f"weights_epoch_{epoch + 1}.pt"` writes `weights_epoch_10.pt`)."""
    if path is None:
        return []
    value = ctx.single_value(path)
    nodes = [path, *walk(ctx, path)] + ([value, *walk(ctx, value)] if value is not None else [])
    patterns = []
    for node in nodes:
        if not isinstance(node, cst.FormattedString):
            continue
        text = "".join(
            part.value if isinstance(part, cst.FormattedStringText) else "\0" for part in node.parts
        )
        name = text.rsplit("/", 1)[-1]  # the folder is often a variable: the name decides
        stem = name.rsplit(".", 1)[0].replace("\0", "")
        if "." in name and len(stem) >= 2:  # `f"{epoch}.pt"` names any checkpoint
            patterns.append(re.compile(".+".join(re.escape(piece) for piece in name.split("\0"))))
    return patterns


# file names of a model's checkpoint, which people share (`ckpt.pt`, `best_model.pth`)
_CHECKPOINT_NAME_RE = re.compile(
    r"ckpt|checkpoint|model|weight|best|last|epoch|state|\.(pth|ckpt|tar|bin)$", re.IGNORECASE
)


def saved_by_a_sibling_script(ctx, load: cst.Call) -> bool:
    """The data file name the load spells (`'embedding.pt'`, not a checkpoint's) is written by
    `torch.save` in another script of the same folder (a `node2vec.py` that writes the
    embedding `mlp.py` reads): a pipeline reading back its own earlier stage."""
    keys = _path_keys(ctx, argument(load, "f", 0))
    names = {key[len("literal:") :] for key in keys if key.startswith("literal:")}
    if not names or not ctx.path or any(_CHECKPOINT_NAME_RE.search(name) for name in names):
        return False
    here = Path(ctx.path).resolve()
    try:  # the folder's modification time keys the cache: a script added since is read
        changed = here.parent.stat().st_mtime_ns
    except OSError:
        return False
    saved = _names_saved_in_folder(str(here.parent), changed)
    return any(names & spelled for script, spelled in saved.items() if script != here.name)


@lru_cache(maxsize=64)
def _names_saved_in_folder(folder: str, changed: int) -> dict[str, frozenset[str]]:
    """For each `.py` of `folder`, the file names its `torch.save` calls write: string literals
    in the path argument, or in what the file assigns to a name passed there."""
    found: dict[str, frozenset[str]] = {}
    for script in sorted(Path(folder).glob("*.py"))[:200]:
        try:
            text = script.read_text(encoding="utf-8", errors="replace")
            tree = ast.parse(text) if "save(" in text else None
        except (OSError, SyntaxError, ValueError):
            continue
        if tree is not None:
            found[script.name] = frozenset(_saved_file_names(tree))
    return found


def _saved_file_names(tree: ast.AST) -> set[str]:
    assigned: dict[str, list[ast.AST]] = {}
    paths: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(node.value)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "save"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in ("torch", "th")
        ):
            paths += node.args[1:2] + [k.value for k in node.keywords if k.arg == "f"]
    names = set()
    for path in paths:
        values = [path, *(assigned.get(path.id, []) if isinstance(path, ast.Name) else [])]
        for value in values:
            for node in ast.walk(value):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    names.add(node.value.replace("\\", "/").rsplit("/", 1)[-1])
    return names


def saved_from_cpu(ctx, save: cst.Call) -> bool:
    """The saved object is moved to CPU in the call (`.cpu()`, `.to("cpu")`) or is a name bound
    to such a value (a CPU-offloaded state dict)."""
    obj = argument(save, "obj", 0)
    if obj is None:
        return False
    values = [obj]
    if isinstance(obj, cst.Name):
        values += ctx.assigned_values(obj) or []
    return any(_mentions_cpu(ctx, value) for value in values)


def offloads_state_to_cpu(ctx) -> bool:
    """The file gathers state dicts onto CPU (`FullStateDictConfig(offload_to_cpu=True)`), so
    what it saves holds CPU tensors."""
    for call in ctx.index.calls:
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "offload_to_cpu":
                return isinstance(arg.value, cst.Name) and arg.value.value == "True"
    return False


def _mentions_cpu(ctx, expr: cst.BaseExpression) -> bool:
    for node in [expr, *walk(ctx, expr)]:
        if method_call(node, "cpu"):
            return True
        if isinstance(node, cst.SimpleString) and node.evaluated_value == "cpu":
            return True
        if isinstance(node, cst.Name) and node.value == "offload_to_cpu":
            return True
    return False


def saved_earlier_in_scope(ctx, save: cst.Call, load: cst.Call) -> bool:
    """`save` comes before `load` in the same function (or both at module level): the load
    reads back what this run wrote, onto the devices it runs on."""
    same = ctx.enclosing(save, cst.FunctionDef) is ctx.enclosing(load, cst.FunctionDef)
    return same and ctx.line(save) < ctx.line(load)


def cached_in_other_branch(ctx, save: cst.Call, load: cst.Call) -> bool:
    """`if exists(path): x = torch.load(path) else: x = compute(); torch.save(x, path)`: a cache
    this program fills on this machine and reads back there."""
    branch_if = ctx.enclosing(load, cst.If)
    while branch_if is not None:
        if ctx.is_inside(save, branch_if):  # the innermost `if` holding both decides
            in_body = ctx.is_inside(load, branch_if.body)
            return branch_if.orelse is not None and in_body != ctx.is_inside(save, branch_if.body)
        branch_if = ctx.enclosing(branch_if, cst.If)
    return False


def sibling_branch_sets(ctx, call: cst.Call, option: str, position: int) -> bool:
    """`call` sits in one branch of an `if` whose other branch calls the same function with
    `option` given: the branch that leaves it out does so on purpose."""
    branch_if = ctx.enclosing(call, cst.If)
    if branch_if is None:
        return False
    name = ctx.call_name(call)
    for other in ctx.calls_to(name) if name else []:
        if other is call or argument(other, option, position) is None:
            continue
        other_if = ctx.enclosing(other, cst.If)
        if other_if is None:
            continue
        if (
            other_if is branch_if
            or ctx.is_inside(other_if, branch_if)
            or ctx.is_inside(branch_if, other_if)
        ):
            return True
    return False


def loaded_into_numpy(ctx, load: cst.Call) -> bool:
    """The loaded value is turned into a tensor with `torch.from_numpy` (the file holds NumPy
    arrays) or handed to NumPy."""
    target = _assigned_name(ctx, load)
    if target is None:
        return False
    scope = ctx.scope(target)
    for access in ctx.accesses(target.value, scope):
        for ancestor in ctx.ancestors(access.node):
            if isinstance(ancestor, cst.Call):
                name = ctx.call_name(ancestor) or ""
                if name in _NUMPY_SINKS or name.startswith("numpy."):
                    return True
            if isinstance(ancestor, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                break
    return False


def _assigned_name(ctx, call: cst.Call) -> cst.Name | None:
    parent = ctx.parent(call)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
        target = parent.targets[0].target
        return target if isinstance(target, cst.Name) else None
    return None


def loads_into_state_dict(ctx, load: cst.Call) -> bool:
    """`m.load_state_dict(torch.load(...))`, or a name assigned from the load that is only
    passed to `load_state_dict`: a state dict, which `weights_only=True` always loads."""
    parent = ctx.parent(load)
    if isinstance(parent, cst.Arg):
        call = ctx.parent(parent)
        return method_call(call, "load_state_dict")
    target = _assigned_name(ctx, load)
    if target is None:
        return False
    accesses = ctx.accesses(target.value, ctx.scope(target))
    if not accesses:
        return False
    for access in accesses:
        parent = ctx.parent(access.node)
        if isinstance(parent, cst.Arg) and method_call(ctx.parent(parent), "load_state_dict"):
            continue
        return False
    return True


_MODULE_METHODS = ("eval", "train", "to", "cuda", "parameters", "state_dict", "forward")


def loaded_into_model(ctx, load: cst.Call) -> bool:
    """The loaded value feeds a model or optimizer: passed (or a key of it passed) to
    `load_state_dict`, or used as a module (called, `.eval()`, `.to(...)`, `.parameters()`).
    Other loads hold data whose device the code does not show."""
    if _feeds_state_dict(ctx, load):
        return True
    target = _assigned_name(ctx, load)
    if target is None:
        return False
    for access in ctx.accesses(target.value, ctx.scope(target)):
        node = access.node
        parent = ctx.parent(node)
        if isinstance(parent, cst.Subscript) and _feeds_state_dict(ctx, parent):
            return True
        if _feeds_state_dict(ctx, node):
            return True
        if isinstance(parent, cst.Call) and parent.func is node:
            return True
        if isinstance(parent, cst.Attribute) and parent.attr.value in _MODULE_METHODS:
            return isinstance(ctx.parent(parent), cst.Call)
    return False


def _feeds_state_dict(ctx, node: cst.CSTNode) -> bool:
    parent = ctx.parent(node)
    return isinstance(parent, cst.Arg) and method_call(ctx.parent(parent), "load_state_dict")


def in_safe_globals_block(ctx, call: cst.Call) -> bool:
    for ancestor in ctx.ancestors(call):
        if isinstance(ancestor, cst.With):
            for item in ancestor.items:
                target = item.item.func if isinstance(item.item, cst.Call) else item.item
                if (ctx.qualified_name(target) or "").endswith("safe_globals"):
                    return True
    return False


# calls named for writing a checkpoint: `early_stopping(val_loss, model, path)`,
# `save_checkpoint(state, path)`, `lib.dump_checkpoint(...)`, `saver.save(...)`
_SAVER_RE = re.compile(r"save|dump|checkpoint|stopping|stopper|snapshot", re.IGNORECASE)


def written_by_a_saver_before(ctx, load: cst.Call) -> bool:
    """The path `load` reads is built from a name that the same function (or a function nested
    in it) handed, above the load, to a call named for saving a checkpoint
    (`early_stopping(val_loss, model, path)` in the training loop, then
    `torch.load(path + '/checkpoint.pth')`): the program reloads what it wrote itself."""
    path = argument(load, "f", 0)
    if path is None:
        return False
    function = ctx.enclosing(load, cst.FunctionDef)
    if function is None:
        return False
    names = _variables(ctx, path)
    for node in [path, *walk(ctx, path)]:
        if isinstance(node, cst.Name):
            value = _last_value_before(ctx, node)
            if value is not None:
                names |= _variables(ctx, value)
    line = ctx.line(load)
    for call in walk(ctx, function.body):
        if not (
            isinstance(call, cst.Call)
            and ctx.line(call) < line
            and _SAVER_RE.search(_callee_name(call) or "")
        ):
            continue
        for arg in call.args:
            if _variables(ctx, arg.value) & names:
                return True
    return False


def _callee_name(call: cst.Call) -> str | None:
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else None


def _variables(ctx, expr: cst.BaseExpression) -> set[str]:
    """The variables `expr` reads, attributes by their whole dotted name (`path` and
    `args.ckpt_dir` in `os.path.join(path, args.ckpt_dir)`; not imported modules' names, not
    `self` alone)."""
    found = set()
    for node in [expr, *walk(ctx, expr)]:
        if isinstance(node, cst.Attribute) and isinstance(ctx.parent(node), cst.Attribute):
            continue  # the outermost attribute of a chain names it
        if isinstance(node, cst.Attribute) and not ctx.is_imported(node):
            text = "".join(ctx.code(node).split())
            if text.replace(".", "").replace("_", "").isalnum():
                found.add(text)
            continue
        if not isinstance(node, cst.Name) or node.value == "self" or ctx.is_imported(node):
            continue
        if isinstance(ctx.parent(node), cst.Attribute):
            continue  # part of a chain
        found.add(node.value)
    return found
