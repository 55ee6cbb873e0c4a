"""Train with autograd's anomaly detection off.

`torch.autograd.set_detect_anomaly(True)` (or a `detect_anomaly()` block) records a Python
traceback for every op of the forward and checks every backward output for NaN: a debugging mode
that makes forward and backward several times slower. Both switch anomaly mode through
`torch.set_anomaly_enabled`, which the fix keeps at "off". Only error reporting changes: the loss
trajectory must not.
"""

from __future__ import annotations

import torch

from torchdoctor.techniques import finding_codes_for_fix

NAME = "anomaly_off"
SUMMARY = "no torch.autograd.set_detect_anomaly(True) / detect_anomaly() in training"
TOLERANCE = 1e-6
TOLERANCE_REASON = "anomaly mode only checks and records: the arithmetic is the same"
FINDING_CODES = finding_codes_for_fix(NAME)  # from the technique registry
# what the fix can shorten (`--try auto` skips it when these take little of the run)
SHORTENS = ("forward", "backward")
PERMANENT = "torch.autograd.set_detect_anomaly(False)  # or remove the detect_anomaly() block"


def applies_to(run) -> bool:
    return run is not None and bool(run.environment.anomaly_detection)


def apply(hooks) -> None:
    original = torch.set_anomaly_enabled

    def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
        if enabled:
            hooks.mark_used(NAME)
        original(False, check_nan)

    hooks.set_attribute(torch, "set_anomaly_enabled", set_anomaly_enabled)
