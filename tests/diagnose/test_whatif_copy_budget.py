"""The what-if probes' model copy keeps to the budget: a deep copy cannot be stopped once begun,
so its time is predicted from the model's size (parameter and buffer bytes, submodules) and the
copy is not begun when it does not fit in what is left. Decided from structure: a model of 1000
task heads takes longer than the whole budget to copy on any machine (0.23 s idle here, 1.2 s
and more with the old code's probes under load), while a step runs one head."""

from __future__ import annotations

import textwrap

import pytest

from torchdoctor.diagnose.api import diagnose_script

pytestmark = [pytest.mark.timing, pytest.mark.usefixtures("one_torch_thread")]

BUDGET_S = 0.15
TOLERANCE_S = 0.1  # a check's granularity (one batch, one timing round)

MANY_MODULES = """
import torch
from torch import nn


class MultiTask(nn.Module):
    def __init__(self, tasks):
        super().__init__()
        self.trunk = nn.Linear(4, 4)
        self.heads = nn.ModuleList(nn.Linear(4, 4) for _ in range(tasks))

    def forward(self, x, task=0):
        return self.heads[task](self.trunk(x))


def main():
    torch.manual_seed(0)
    model = MultiTask(1000)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)  # a per-tensor loop: a planned probe
    x = torch.randn(2, 4)
    for step in range(8):
        optimizer.zero_grad()
        model(x).square().mean().backward()
        optimizer.step()


if __name__ == "__main__":
    main()
"""


def test_a_model_whose_copy_cannot_fit_in_the_budget_is_not_copied(tmp_path):
    script = tmp_path / "many_modules.py"
    script.write_text(textwrap.dedent(MANY_MODULES))
    report = diagnose_script(str(script), steps=3, warmup=2, whatif_budget_s=BUDGET_S)
    whatif = report.run.whatif
    assert not whatif.timings, whatif.timings
    # the old code copied it (0.35 s and more) before any timing refused: over the budget
    assert whatif.seconds <= BUDGET_S + TOLERANCE_S, (whatif.seconds, whatif.skipped)
    assert whatif.skipped and all("over the time budget" in s for s in whatif.skipped), whatif
