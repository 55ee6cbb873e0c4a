"""The reference Trainer passes its own diagnosis: over in-memory tensors, `workers="auto"` loads
in the training process (no D109), and the NaN guard reads its flags in batches (no per-step
sync finding pointing into torchdoctor/trainer)."""

from __future__ import annotations

import textwrap

import pytest
import torch

from torchdoctor.diagnose.api import diagnose_script
from torchdoctor.trainer.faults import CHECK_EVERY, NonFiniteGuard

# Timing-based diagnoses: run after the rest of the suite, one at a time (tests/conftest.py).
pytestmark = pytest.mark.timing

TRAINER_OVER_TENSORS = """
import torch
from torch import nn
from torch.utils.data import TensorDataset
from torchdoctor import Trainer, TrainerConfig

torch.set_num_threads(1)
torch.manual_seed(0)
x = torch.randn(1024, 32)
y = (x.sum(1) > 0).long()
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
trainer = Trainer(model, optimizer, nn.CrossEntropyLoss(), TrainerConfig(epochs=2, batch_size=32))
trainer.fit(TensorDataset(x, y))
"""


def test_trainer_over_in_memory_tensors_gets_no_finding_about_its_own_code(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(TRAINER_OVER_TENSORS), encoding="utf-8")
    threads = torch.get_num_threads()
    try:
        report = diagnose_script(str(script), steps=20, warmup=3)
    finally:
        torch.set_num_threads(threads)
    assert report.run.status == "stopped", report.run.error
    assert [ld.num_workers for ld in report.run.loaders] == [0]
    codes = [f.id for f in report.findings]
    assert "D109" not in codes and "D401" not in codes, codes
    ours = [f.id for f in report.findings if "torchdoctor/trainer" in " ".join(f.evidence)]
    assert not ours, [(f.id, f.evidence) for f in report.findings]
    assert all(site.per_step < 1 for site in report.run.sync_sites)


def test_nan_flags_are_read_in_batches_and_still_name_the_step():
    guard = NonFiniteGuard("stop")
    reads = []
    original = torch.Tensor.tolist

    def counted(tensor):
        reads.append(tensor.numel())
        return original(tensor)

    torch.Tensor.tolist = counted  # type: ignore[method-assign]
    try:
        for step in range(2 * CHECK_EVERY + 1):
            bad = step == CHECK_EVERY + 3
            guard.observe(
                torch.tensor(float("nan") if bad else 1.0), epoch=0, step=step, batch=step
            )
            if step < 2 * CHECK_EVERY:
                assert guard.step_ok()
    finally:
        torch.Tensor.tolist = original  # type: ignore[method-assign]
    assert len(reads) <= 2  # one read per CHECK_EVERY steps, not one per step

    from torchdoctor.trainer.faults import NonFiniteLossError

    with pytest.raises(NonFiniteLossError, match=f"step {CHECK_EVERY + 4}, batch index"):
        guard.step_ok()
        guard.flush()
