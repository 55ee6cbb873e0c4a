"""The twelfth set of planted scripts (styles.py PLANTED12): short runs (6 measured steps, no
what-if timing) of plants a fix of round 14 made visible. The full default-mode
table, ranks included, is `bench/planted_styles.py --set styles12`.
"""

from __future__ import annotations

import pytest
from planted import (
    diagnose_planted,
    found,
    one_thread,  # noqa: F401  (autouse fixture: one torch thread)
)
from styles import PLANTED12


@pytest.mark.timing
def test_a_k_fold_subset_of_a_tensor_dataset_gets_the_batched_fetch():
    """`DataLoader(Subset(TensorDataset, fold))` (m09): the loader's dataset is a Subset, what it
    indexes is tensors in memory: D108 (a batched fetch), not D101's workers."""
    report = diagnose_planted(PLANTED12, "m09_kfold_subsets_of_tensor_dataset_default_loader")
    loader = report.run.loaders[0]
    assert (loader.dataset_type, loader.wrapped_dataset_types) == ("Subset", ("TensorDataset",))
    codes = [code for code, _ in found(report)]
    assert "D108" in codes and "D101" not in codes, found(report)
