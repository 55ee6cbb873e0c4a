"""Turn a recipe spec (a built-in name or a path to a user's .py file) into a `Recipe`.

A user's file is imported under a unique module name (so two recipe files called `recipe.py`
never collide, and DataLoader workers forked from this process still find the module) and must
define `recipe(**options) -> Recipe`. When the user's code raises, the user sees *their*
traceback (our import machinery filtered out) and a one-line `TorchdoctorError`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import itertools
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from torchdoctor.errors import TorchdoctorError, UsageError
from torchdoctor.recipes.base import Recipe

_PACKAGE_DIR = str(Path(__file__).resolve().parents[1])  # .../src/torchdoctor
_counter = itertools.count()


def load_recipe(spec: str, **options: Any) -> Recipe:
    """Build the recipe named by `spec` with `options` (strings are converted for built-ins)."""
    from torchdoctor.recipes import REGISTRY

    if spec in REGISTRY:
        factory = REGISTRY[spec]
        return _build(spec, factory, _coerce_options(spec, factory, options))
    if spec.endswith(".py") or "/" in spec or "\\" in spec:
        return _load_user_file(Path(spec), options)
    known = ", ".join(sorted(REGISTRY))
    raise UsageError(
        f"unknown recipe {spec!r}; built-in recipes: {known} (or a path to a .py file)"
    )


def _load_user_file(path: Path, options: dict[str, Any]) -> Recipe:
    if not path.is_file():
        raise UsageError(f"recipe file not found: {path}")
    if path.suffix != ".py":
        raise UsageError(f"recipe file must be a Python file (.py): {path}")
    resolved = path.resolve()
    module = _import_user_module(resolved)
    factory = getattr(module, "recipe", None)
    if not callable(factory):
        raise UsageError(
            f"{path} does not define a function `recipe(**options)` returning a torchdoctor.Recipe"
        )
    return _build(str(path), factory, options, user_file=resolved)


def _import_user_module(path: Path):
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    name = f"torchdoctor_user_recipe_{path.stem}_{digest}_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot import recipe file: {path}")
    module = importlib.util.module_from_spec(spec)
    # Registered before running it: dataclasses and pickling look modules up by name.
    sys.modules[name] = module
    # Sibling imports (`from helpers import ...`) work as they would with `python file.py`.
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:  # noqa: BLE001 - SystemExit/KeyboardInterrupt pass through below
        sys.modules.pop(name, None)
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise _user_failure(exc, path, "importing") from exc
    return module


def _build(label: str, factory: Callable[..., Any], options: dict[str, Any], user_file=None):
    try:
        recipe = factory(**options)
    except TorchdoctorError:
        raise
    except Exception as exc:
        if user_file is not None:
            raise _user_failure(exc, user_file, "running recipe() in") from exc
        if isinstance(exc, ValueError):  # built-ins raise ValueError for bad option values
            raise UsageError(f"recipe {label!r}: {exc}") from exc
        raise TorchdoctorError(f"recipe {label!r} failed: {type(exc).__name__}: {exc}") from exc
    if not isinstance(recipe, Recipe):
        raise UsageError(
            f"recipe() in {label} returned {type(recipe).__name__}, expected a torchdoctor.Recipe"
        )
    return recipe


def user_code_failure(exc: BaseException, path: Path, doing: str) -> TorchdoctorError | None:
    """For an error after recipe() returned (the optimizer factory, the model's forward, the
    loss, the dataset): the user's failure, shown like one inside recipe(), unless it was raised
    in torchdoctor's own code (None: then it is our bug and keeps its full traceback)."""
    frames = traceback.extract_tb(exc.__traceback__)
    if isinstance(exc, TorchdoctorError) or not frames or _is_ours(frames[-1].filename):
        return None
    return _user_failure(exc, path, doing)


def _user_failure(exc: BaseException, path: Path, doing: str) -> TorchdoctorError:
    """Print the user's traceback (without our frames) to stderr; return the one-line error."""
    tb = traceback.TracebackException.from_exception(exc)
    _drop_our_frames(tb)
    sys.stderr.write("".join(tb.format()))
    sys.stderr.flush()
    return TorchdoctorError(f"{type(exc).__name__}: {exc} (while {doing} {path})")


def _drop_our_frames(tb: traceback.TracebackException, seen=None) -> None:
    seen = seen if seen is not None else set()
    if id(tb) in seen:
        return
    seen.add(id(tb))
    kept = [f for f in tb.stack if not _is_ours(f.filename)]
    tb.stack = traceback.StackSummary.from_list(kept)
    for chained in (tb.__cause__, tb.__context__):
        if chained is not None:
            _drop_our_frames(chained, seen)


def _is_ours(filename: str) -> bool:
    return filename.startswith("<frozen importlib") or filename.startswith(_PACKAGE_DIR)


def _coerce_options(name: str, factory: Callable[..., Any], options: dict[str, Any]):
    """Check option names against the built-in's signature; convert "3" -> 3 from the CLI."""
    params = inspect.signature(factory).parameters
    coerced = {}
    for key, value in options.items():
        param = params.get(key)
        if param is None:
            known = ", ".join(
                p
                for p in params
                if params[p].kind is inspect.Parameter.KEYWORD_ONLY
                or params[p].default is not inspect.Parameter.empty
            )
            raise UsageError(f"recipe {name!r} has no option {key!r}; options: {known}")
        coerced[key] = _convert(name, key, value, param.default)
    return coerced


def _convert(name: str, key: str, value: Any, default: Any) -> Any:
    if not isinstance(value, str) or default is None or isinstance(default, str):
        return value
    try:
        if isinstance(default, bool):
            if value.lower() in ("1", "true", "yes", "on"):
                return True
            if value.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(value)
        return type(default)(value)
    except ValueError:
        kind = type(default).__name__
        raise UsageError(f"recipe {name!r}: option {key}={value!r} is not a valid {kind}") from None
