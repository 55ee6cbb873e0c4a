"""The user's program, as one value: what to run (a script path or a `-m` module), its argv, and
the directory it runs in.

`diagnose`, `--try` and the trial worker used to pass a `(script, args, module)` triple through
every call and check it in four places; a `Program` is checked once, when it is made (no torch
import: a typo in the script name fails before anything heavy loads).

    program = Program("train.py", ("--epochs", "1"))
    program = Program("pkg.train", module=True)
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field

from torchdoctor.errors import UsageError


@dataclass(frozen=True)
class Program:
    """A script path (relative to `cwd`) or a module name, with the arguments it gets.

    Made only for a target that exists (UsageError, exit 2, otherwise): whoever holds a Program
    can run it without checking again."""

    target: str
    argv: Sequence[str] = ()  # kept as a tuple
    module: bool = False
    cwd: str = field(default_factory=os.getcwd)

    def __post_init__(self) -> None:
        object.__setattr__(self, "argv", tuple(self.argv))
        object.__setattr__(self, "cwd", os.path.abspath(self.cwd))
        if self.module:
            self._check_module()
        else:
            self._check_script()

    @property
    def path(self) -> str:
        """The script's absolute path (for a module: its name)."""
        return self.target if self.module else os.path.join(self.cwd, self.target)

    @property
    def sys_path_entry(self) -> str:
        """What `python script.py` / `python -m` put in sys.path[0] for this program."""
        if self.module:
            return self.cwd
        if os.path.isdir(self.path) or zipfile.is_zipfile(self.path):  # with __main__.py: itself
            return self.path
        # Python resolves a script's symlinks (a link in bin/ to the real file imports the
        # modules beside the real file); a folder or zip stays as typed
        return os.path.dirname(os.path.realpath(self.path))

    def command_line(self) -> list[str]:
        """The target and its arguments as typed after `python` (`-m` first for a module)."""
        return ["-m", self.target, *self.argv] if self.module else [self.target, *self.argv]

    def _check_module(self) -> None:
        """A package without `__main__.py` is not refused here: `python -m pkg` imports the
        package first (its `__init__` may train, print or fail: the program's), then says in one
        line that it cannot be run, exit 1; the run does the same through runpy."""
        try:
            spec = self._find_spec(self.target)
        except (ImportError, ValueError) as exc:
            raise UsageError(f"cannot find module {self.target!r}: {exc}") from None
        except Exception:  # noqa: BLE001 - the package's own code failed: the program's error,
            return  # shown as its traceback when the run imports it, as `python -m` shows it
        if spec is None:
            raise UsageError(f"no module named {self.target!r}")

    def _find_spec(self, name: str):
        # Look where `python -m` looks: the program's directory first (our console script's own
        # sys.path[0] is its bin/ folder). The runners set the same path for the run itself.
        saved_path = sys.path[:]
        sys.path.insert(0, self.cwd)
        try:
            return _spec_on_path(name) or importlib.util.find_spec(name)
        finally:
            sys.path[:] = saved_path

    def _check_script(self) -> None:
        if not os.path.exists(self.path):
            raise UsageError(f"script not found: {self.target}")
        if os.path.isdir(self.path) and not os.path.exists(os.path.join(self.path, "__main__.py")):
            raise UsageError(f"{self.target} is a directory without __main__.py")


def _spec_on_path(name: str):
    """The module's spec found through its packages' folders on sys.path, without importing
    them: a package whose `__init__` fails (or prints) must do so in the program's run, once,
    as the program's error. None where the path finder cannot tell (a package already imported,
    or found by another finder, such as an editable install's): importlib's own search then."""
    parts = name.split(".")
    if any(".".join(parts[:end]) in sys.modules for end in range(1, len(parts))):
        return None
    search = None  # sys.path for the top-level package, then each package's own folders
    spec = None
    for end in range(1, len(parts) + 1):
        if end > 1 and search is None:
            return None  # a module, not a package: importlib says why
        spec = importlib.machinery.PathFinder.find_spec(".".join(parts[:end]), search)
        if spec is None:
            return None
        search = spec.submodule_search_locations
    return spec


def as_program(target: Program | str, argv: Sequence[str] = (), module: bool = False) -> Program:
    """For the Python API's convenience: a Program as is, or one made from a target and argv."""
    if isinstance(target, Program):
        if argv or module:
            raise UsageError("give either a Program or a target with its argv, not both")
        return target
    return Program(target, tuple(argv), module)
