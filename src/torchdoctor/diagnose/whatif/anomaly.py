"""What-if: forward and backward of a copy of the model on its real batch with autograd anomaly
detection on (as the program ran) vs off; the program's own mode is put back afterwards."""

from __future__ import annotations

import torch

from torchdoctor.diagnose.observations import WhatIfTiming
from torchdoctor.diagnose.whatif.guard import clock_name, compute_clock, interleaved_medians
from torchdoctor.diagnose.whatif.replay import Replay


def forward_backward_in_mode(replay: Replay, anomaly: bool):
    """The replay's forward and backward with anomaly detection `anomaly`, whatever the program
    left it at after its steps (d211 turns it off after its loop)."""

    def run() -> None:
        with torch.autograd.set_detect_anomaly(anomaly):
            replay.forward_backward()

    return run


def measure_anomaly(replay: Replay, allowance_s: float) -> list[WhatIfTiming]:
    clock = compute_clock(replay.device_type)
    medians, rounds = interleaved_medians(
        {
            "as run": forward_backward_in_mode(replay, True),
            "fix": forward_backward_in_mode(replay, False),
        },
        replay.device_type,
        allowance_s,
        clock,
    )
    return [
        WhatIfTiming(
            name="anomaly.off",
            unit="forward and backward",
            as_run_s=medians["as run"],
            alternative_s=medians["fix"],
            repeats=rounds,
            setting="torch.autograd.set_detect_anomaly(False)",
            clock=clock_name(clock),
        )
    ]
