"""D801 on a line whose time is an installed package's (real-programs corpus, round 9): named as
the package's work, and held to the bar of work the finding cannot name (Lightning's
`self.log(...)` took 10-13% of a small model's step on its CLI examples)."""

from __future__ import annotations

import pytest
from rule_builders import line_profiled_run, only

from torchdoctor.diagnose.observations import LineStat
from torchdoctor.diagnose.rules import d801_hot_user_line as d801


def _logging_run(samples: int):
    """A run whose one hot line calls a framework's logging, at `samples` of 400 samples."""
    run = line_profiled_run()
    run.lines.lines = [
        LineStat(
            "train.py:81", "other", samples=samples, self_samples=samples,
            share=samples / 400, self_share=samples / 400, function="training_step",
            code='self.log("train_loss", loss, on_epoch=True)',
            callees=["lightning.pytorch.core.module.LightningModule.log",
                     "torch._dynamo.eval_frame.DisableContext.__call__.<locals>._fn"],
        )
    ]  # fmt: skip
    return run


@pytest.mark.parametrize("samples", [52, 80], ids=["13%", "20%"])
def test_a_packages_line_needs_the_bar_of_unnamed_work(samples):
    findings = d801.check(_logging_run(samples))
    if samples / 400 < d801.MIN_SHARE_UNKNOWN:
        assert findings == []
    else:
        assert only(findings, "D801").details["kind"] == "package"
