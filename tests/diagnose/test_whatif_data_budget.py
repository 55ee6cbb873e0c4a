"""The hand-timed data what-ifs (DataLoader workers beside a replay of the step, persistent
workers) keep to the what-if budget like the interleaved timings: a probe whose runs would not
fit in what is left does not start them and says so. Decided from structure: a dataset that
sleeps in `__getitem__` (or a worker set-up that sleeps) makes a run longer than the whole budget
on any machine, and load only makes it longer."""

from __future__ import annotations

import textwrap

import pytest

from torchdoctor.diagnose.api import diagnose_script
from torchdoctor.diagnose.whatif.data import MIN_BATCHES, worker_counts
from torchdoctor.intercept.hooks import usable_cores

# Timing-based diagnoses: run after the rest of the suite, one at a time (tests/conftest.py).
pytestmark = [pytest.mark.timing, pytest.mark.usefixtures("one_torch_thread")]

BUDGET_S = 0.4
# what a probe may go past the budget: a check's granularity (one batch, one timing round)
TOLERANCE_S = 0.1

SLOW_DATASET = """
import time
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Slow(Dataset):
    def __len__(self):
        return {length}

    def __getitem__(self, i):
        time.sleep(0.01)  # decoding a file, say: 80 ms a batch of 8
        return torch.full((16,), float(i % 7)), i % 2


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(Slow(), batch_size=8, shuffle=True{workers})
    for epoch in range({epochs}):
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()


if __name__ == "__main__":
    main()
"""

SLOW_WORKER_START = SLOW_DATASET.replace(
    "        time.sleep(0.01)  # decoding a file, say: 80 ms a batch of 8\n", ""
).replace("class Slow(", "def slow_start(worker):\n    time.sleep(0.6)\n\n\nclass Slow(")


def _whatif(tmp_path, source: str, **shape):
    script = tmp_path / "slow_data.py"
    script.write_text(textwrap.dedent(source.format(**shape)))
    report = diagnose_script(str(script), steps=None, warmup=2, whatif_budget_s=BUDGET_S)
    return report.run.whatif


def test_workers_probe_does_not_start_side_runs_a_slow_dataset_cannot_finish_in_the_budget(
    tmp_path,
):
    # 4 side runs (as run twice, 1 and 2 workers) of at least 4 batches of 80 ms: >= 1.3 s
    whatif = _whatif(tmp_path, SLOW_DATASET, length=160, workers="", epochs=1)
    assert not [t for t in whatif.timings if t.name == "data.workers"]
    notes = [s for s in whatif.skipped if s.startswith("DataLoader workers")]
    # refused before the first side run: the fewest batches of every run did not fit
    assert notes and f"{MIN_BATCHES} rounds of" in notes[0], whatif.skipped
    assert whatif.seconds <= BUDGET_S + TOLERANCE_S, (whatif.seconds, whatif.skipped)


def test_worker_start_up_probe_does_not_start_a_worker_set_its_observed_starts_cannot_fit(
    tmp_path,
):
    # each epoch start sleeps 0.6 s in worker_init_fn, as the program's own starts showed: the
    # probe's fresh starts and the persistent workers' first cannot fit, and none is begun (the
    # old code began one, 0.6 s, to find out: over the 0.4 s budget)
    whatif = _whatif(
        tmp_path,
        SLOW_WORKER_START,
        length=32,  # 4 batches an epoch: the measured steps span epoch starts
        workers=", num_workers=1, worker_init_fn=slow_start",
        epochs=4,
    )
    assert not [t for t in whatif.timings if t.name == "data.persistent_workers"]
    notes = [s for s in whatif.skipped if s.startswith("worker start-up")]
    assert notes and "would take about" in notes[0], whatif.skipped
    assert whatif.seconds <= BUDGET_S + TOLERANCE_S, (whatif.seconds, whatif.skipped)


FETCH_BOUND = """
import time
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Decoded(Dataset):
    def __len__(self):
        return 512

    def __getitem__(self, i):
        time.sleep(0.0005)  # 8 ms a batch of 16, against well under 1 ms of compute
        return torch.randn(8), i % 2


loader = DataLoader(Decoded(), 16, drop_last=True)
model = nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
"""


def test_a_loop_that_waits_longer_for_data_than_it_computes_times_the_most_workers_first(
    tmp_path,
):
    # one worker only overlaps a batch's fetch with a compute far shorter than it, so the step
    # stays as long as the fetch; a short run whose budget holds one worker count must time the
    # count that can pay (timing 1 worker first left D101 silent in 2 of 3 six-step runs)
    script = tmp_path / "fetch_bound.py"
    script.write_text(FETCH_BOUND)
    report = diagnose_script(str(script), steps=6, warmup=2, whatif_budget_s=2.0)
    timed = [t for t in report.run.whatif.timings if t.name == "data.workers"]
    most = max(worker_counts(usable_cores()))
    assert timed and timed[0].setting == f"num_workers={most}", (timed, report.run.whatif.skipped)
