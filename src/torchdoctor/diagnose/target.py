"""Check what `torchdoctor diagnose` was asked to run, before torch is imported (so a typo in the
script name fails fast with one line and exit code 2)."""

from __future__ import annotations

import importlib.util
import os
import sys

from torchdoctor.errors import UsageError


def resolve_target(target: str, module: bool) -> str:
    """Check the target exists before touching anything; UsageError (exit 2) if it does not."""
    if module:
        # Look where `python -m` looks: the current directory first (our console script's own
        # sys.path[0] is its bin/ folder). The runner sets the same path for the run itself.
        saved_path = sys.path[:]
        sys.path.insert(0, os.getcwd())
        try:
            spec = importlib.util.find_spec(target)
        except (ImportError, ValueError) as exc:
            raise UsageError(f"cannot find module {target!r}: {exc}") from None
        finally:
            sys.path[:] = saved_path
        if spec is None:
            raise UsageError(f"no module named {target!r}")
        return target
    if not os.path.exists(target):
        raise UsageError(f"script not found: {target}")
    if os.path.isdir(target) and not os.path.exists(os.path.join(target, "__main__.py")):
        raise UsageError(f"{target} is a directory without __main__.py")
    return target
