"""The tests' child processes import the torchdoctor the tests import: from an installed package,
or from a source checkout run with PYTHONPATH=src, where a child given an environment of its own
(no PYTHONPATH, or one naming other folders) found no torchdoctor at all."""

from __future__ import annotations

import os
from pathlib import Path

import torchdoctor


def with_package_path(env: dict[str, str]) -> dict[str, str]:
    """`env` with the folder that holds the imported torchdoctor package first on PYTHONPATH,
    unless that folder is an installed environment's site-packages (a child finds it there
    itself, and putting it on PYTHONPATH would put it before the standard library)."""
    folder = Path(torchdoctor.__file__).resolve().parents[1]
    if folder.name in ("site-packages", "dist-packages"):
        return dict(env)
    paths = [str(folder), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    return {**env, "PYTHONPATH": os.pathsep.join(paths)}
