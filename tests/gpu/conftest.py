"""Tests that need a CUDA GPU: every test here gets the `cuda` marker and is skipped where CUDA
is absent (CI has none: they cost it nothing but collection). Run them on a GPU machine with
`python -m pytest -m cuda tests/gpu`."""

import pytest
import torch


def pytest_collection_modifyitems(config, items):
    here = str(config.rootpath / "tests" / "gpu")
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if str(item.path).startswith(here):
            item.add_marker(pytest.mark.cuda)
            if not torch.cuda.is_available():
                item.add_marker(skip)
