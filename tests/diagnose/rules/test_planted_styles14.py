"""The fourteenth set of planted scripts (styles.py PLANTED14): short runs (6 measured steps, no
what-if timing) of plants a fix of round 16 made visible. The full default-mode table, ranks
included, is `bench/planted_styles.py --set styles14`.
"""

from __future__ import annotations

import pytest
from planted import (
    diagnose_planted,
    found,
    one_thread,  # noqa: F401  (autouse fixture: one torch thread)
)
from styles import PLANTED14


@pytest.mark.timing
def test_busy_workers_on_every_core_get_d110_at_info_and_one_core_left_does_not():
    """`num_workers=len(os.sched_getaffinity(0))` over a dataset that augments with NumPy per
    sample (r11): D110 was silent unless the steps waited half their time; a worker on every
    core is now said, at info with no saving (the cost depends on the core count). The control
    (one core left) does not get it."""
    script = "r11_workers_from_sched_getaffinity_all_cores_heavy_augment"
    report = diagnose_planted(PLANTED14, script)
    assert ("D110", "info") in found(report) or ("D110", "warning") in found(report), found(report)
    control = diagnose_planted(PLANTED14, script, "--fixed")
    assert "D110" not in [code for code, _ in found(control)], found(control)
