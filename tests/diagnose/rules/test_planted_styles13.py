"""The thirteenth set of planted scripts (styles.py PLANTED13): short runs (6 measured steps, no
what-if timing) of plants a fix of round 15 made visible. The full default-mode table, ranks
included, is `bench/planted_styles.py --set styles13`.
"""

from __future__ import annotations

import pytest
from planted import (
    diagnose_planted,
    found,
    one_thread,  # noqa: F401  (autouse fixture: one torch thread)
)
from styles import PLANTED13


@pytest.mark.timing
def test_a_streamed_datasets_batches_of_four_through_a_worker_get_d112():
    """An IterableDataset of episodes batched 4 at a time through a persistent worker (p12):
    D112 looked at map-style datasets only."""
    report = diagnose_planted(PLANTED13, "p12_meta_learning_episodes_of_four_through_worker")
    assert report.run.loaders[0].iterable_dataset
    assert "D112" in [code for code, _ in found(report)], found(report)
