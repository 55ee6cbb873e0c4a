"""Where generated data sets live, and how a directory is created all-or-nothing.

Generated data is written into a hidden temporary directory next to its final place and renamed
into place only when complete, so an interrupted run (Ctrl-C, a crash, a full disk) never leaves a
half data set that a later run would mistake for a finished one.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from torchdoctor.errors import TorchdoctorError

MANIFEST = "manifest.json"


def cache_root(override: str | os.PathLike | None = None) -> Path:
    """`override`, else $TORCHDOCTOR_CACHE, else ~/.cache/torchdoctor."""
    if override:
        return Path(override).expanduser()
    env = os.environ.get("TORCHDOCTOR_CACHE")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "torchdoctor"


def params_hash(params: dict[str, Any]) -> str:
    """A short stable name for a set of generation parameters."""
    blob = json.dumps(params, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


def build_once(final: Path, build: Callable[[Path], None], manifest: dict[str, Any]) -> Path:
    """Return `final`, calling `build(tmp_dir)` first if it does not exist yet.

    A directory counts as present only when it holds the manifest, which is written last.
    """
    if (final / MANIFEST).is_file():
        return final
    try:
        return _build(final, build, manifest)
    except OSError as exc:  # read-only or full disk: one line, nothing half-written left
        reason = exc.strerror or str(exc)
        raise TorchdoctorError(
            f"cannot write generated data under {final.parent}: {reason} "
            "(set TORCHDOCTOR_CACHE or --cache-dir to a writable directory)"
        ) from exc


def _build(final: Path, build: Callable[[Path], None], manifest: dict[str, Any]) -> Path:
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.tmp-", dir=final.parent))
    try:
        build(tmp)
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        if final.exists():  # a stale directory without a manifest (older crash): replace it
            if (final / MANIFEST).is_file():  # another process finished first: use theirs
                return final
            shutil.rmtree(final)
        try:
            os.rename(tmp, final)
        except OSError:
            if not (final / MANIFEST).is_file():  # not a lost race: a real failure
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final
