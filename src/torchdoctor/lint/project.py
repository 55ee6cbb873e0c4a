"""What a file's project declares about itself: the range of torch versions it allows.

Read from the nearest `pyproject.toml`, `setup.cfg` or `requirements*.txt` found walking up from
the file (stopping at a git repository's root). Rules use it to skip advice that the declared
torch already follows by default (torch >= 2.6 loads checkpoints with `weights_only=True`), and
fixes the declared torch cannot run (`weights_only=` exists from torch 1.13).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

# `torch>=2.6`, `torch == 2.7.1`, `torch~=2.6.0`, `"torch>=2.6,<3"`; not `torchvision`.
_REQUIREMENT_RE = re.compile(
    r"""(?:^|["'\s,\[])torch\s*(?:\[[^\]]*\])?\s*(>=|==|~=|>|<=|<)\s*(\d+)\.(\d+)""",
    re.MULTILINE,
)
_LOWER = (">=", "==", "~=", ">")
_UPPER = ("<=", "==", "<")
_PROJECT_FILES = ("pyproject.toml", "setup.cfg")
_MAX_DEPTH = 8


Version = tuple[int, int]


def declared_torch_minimum(path: str) -> Version | None:
    """The lowest (major, minor) torch version the project of `path` allows; None when no
    project file near it names a lower bound for torch."""
    lower = [v for op, v in _requirements(path) if op in _LOWER]
    return min(lower) if lower else None


def declared_torch_maximum(path: str) -> Version | None:
    """The highest (major, minor) torch version the project of `path` allows (`==`, `<=`,
    `<`); None when it names no upper bound."""
    upper = [v for op, v in _requirements(path) if op in _UPPER]
    return max(upper) if upper else None


def _requirements(path: str) -> tuple[tuple[str, Version], ...]:
    return _requirements_in(Path(path).resolve().parent) if path else ()


@lru_cache(maxsize=256)
def _requirements_in(folder: Path) -> tuple[tuple[str, Version], ...]:
    for current in [folder, *folder.parents][:_MAX_DEPTH]:
        files = [current / name for name in _PROJECT_FILES]
        files += sorted(current.glob("requirements*.txt"))
        found = tuple(req for f in files if f.is_file() for req in _requirements_of(f))
        if found or (current / ".git").exists():
            return found
    return ()


def _requirements_of(path: Path) -> list[tuple[str, Version]]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    text = re.sub(r"(?m)#.*$", "", text)
    return [(op, (int(a), int(b))) for op, a, b in _REQUIREMENT_RE.findall(text)]


# `torch._six` was removed in torch 2.0: code importing it runs on torch 1.x only
_TORCH_SIX_RE = re.compile(r"^\s*(?:from\s+torch\._six\s+import|import\s+torch\._six)\b", re.M)
_MODULE_SEARCH_DEPTH = 3


def requires_torch_1(path: str, source: str, local_modules: list[str]) -> bool:
    """The file, or a module of its project it imports (`util.misc`, found beside the file or
    up to two folders above), imports `torch._six`, which torch 2.0 removed: the project runs
    only on torch 1.x, whatever it declares."""
    if _TORCH_SIX_RE.search(source):
        return True
    if not path:
        return False
    folder = Path(path).resolve().parent
    return any(_module_imports_torch_six(folder, module) for module in local_modules)


@lru_cache(maxsize=1024)
def _module_imports_torch_six(folder: Path, module: str) -> bool:
    parts = module.split(".")
    for base in [folder, *folder.parents][:_MODULE_SEARCH_DEPTH]:
        for candidate in (
            base.joinpath(*parts[:-1], parts[-1] + ".py"),
            base.joinpath(*parts, "__init__.py"),
        ):
            if candidate.is_file():
                try:
                    text = candidate.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    return False
                return bool(_TORCH_SIX_RE.search(text))
    return False
