"""The optimizer and evaluation what-ifs time their copies' calls in the allocator state the
program's calls paid for (whatif/allocator.py): the probes count the page faults of the program's
optimizer steps and autograd-on evaluation forwards, and where the program paid them the copy's
call as run is also timed from memory handed back to the system, the two mixed in the share of
the faults the program paid. Decided from page-fault counts (the kernel's count of pages faulted
in, whatever the machine's load) and from the structure of the timings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

from torchdoctor.diagnose.probes.base import thread_page_faults
from torchdoctor.diagnose.rules._measured import how
from torchdoctor.diagnose.whatif.allocator import (
    HANDED_BACK,
    _malloc_trim,
    fault_share,
    memory_handed_back,
    mixed,
    with_handed_back,
)
from torchdoctor.diagnose.whatif.evaluation import measure_evaluation
from torchdoctor.diagnose.whatif.guard import interleaved_samples, paired_ratio
from torchdoctor.diagnose.whatif.replay import Replay

SCRIPTS = Path(__file__).parent / "rules" / "scripts"
needs_fault_counts = pytest.mark.skipif(
    thread_page_faults() is None or _malloc_trim() is None,
    reason="no per-thread page-fault count or no glibc malloc_trim here",
)
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _adamw_step():
    """A per-tensor AdamW step over 3 MiB of parameters: its temporaries are as large."""
    model = nn.Linear(12288, 64)
    for p in model.parameters():
        p.grad = torch.full_like(p, 1e-3)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=False)
    optimizer.step()
    return optimizer.step


def _faults(work) -> int:
    before = thread_page_faults()
    work()
    after = thread_page_faults()
    assert before is not None and after is not None
    return after - before


def check_the_share_of_the_faults() -> None:
    """The checks of the test below, run in a process of their own by it."""
    torch.set_num_threads(1)
    step = _adamw_step()
    memory_handed_back()
    assert _faults(step) > 500  # the temporaries' pages (768 per 3 MiB) are faulted in again
    paid = fault_share(step, "cpu", program_faults=1e6)
    assert paid is not None and paid.share == 1.0 and paid.copy_faults > 500
    half = fault_share(step, "cpu", program_faults=paid.copy_faults / 2)
    assert half is not None and 0.4 < half.share < 0.6
    assert fault_share(step, "cpu", program_faults=0.0) is None
    assert fault_share(step, "cpu", program_faults=None) is None
    assert fault_share(step, "cpu", program_faults=5.0) is None  # a few: not each call's cost
    assert fault_share(step, "cuda", program_faults=1500.0) is None
    variants, prepare = with_handed_back({"as run": step}, "as run", half)
    assert set(variants) == {"as run", "as run" + HANDED_BACK} and set(prepare) == set(variants) - {
        "as run"
    }
    samples = {"as run": [1.0, 2.0], "as run" + HANDED_BACK: [3.0, 2.0], "fix": [0.5, 0.5]}
    mixed_samples = mixed(samples, "as run", half)
    assert set(mixed_samples) == {"as run", "fix"}
    assert mixed_samples["as run"][0] == pytest.approx(1.0 + half.share * 2.0)
    assert mixed_samples["as run"][1] == 2.0


@needs_fault_counts
def test_the_share_of_the_faults_the_program_paid_decides_the_as_run_time():
    # In a fresh process: after an allocation the allocator refused earlier in the same process
    # (test_diagnose_memory_probe's 256 TiB request), malloc_trim no longer made the step's
    # temporaries fault in again (1 fault instead of ~1500): the suite failed when both files
    # ran in one worker, in that order.
    check = (
        f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
        "import test_whatif_allocator as t; t.check_the_share_of_the_faults()"
    )
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    run = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, timeout=120, env=env
    )
    assert run.returncode == 0, run.stderr


def test_interleaved_samples_run_prepare_before_every_call_untimed():
    order: list[str] = []
    variants = {"a": lambda: order.append("a"), "b": lambda: order.append("b")}
    samples, rounds = interleaved_samples(
        variants, "cpu", allowance_s=0.0, prepare={"b": lambda: order.append("p")}
    )
    assert rounds >= 3 and all(len(v) == rounds for v in samples.values())
    assert order == ["a", "p", "b"] * (rounds + 1)  # the warm-up, then each round
    assert paired_ratio({"x": [2.0, 4.0, 30.0], "y": [1.0, 8.0, 10.0]}, "x", "y") == 2.0


_D210_IN_A_FRESH_PROCESS = """
import json, sys
from torchdoctor.diagnose.api import diagnose_script
report = diagnose_script(sys.argv[1], steps=6, warmup=2, whatif_budget_s=2.0)
timing = next(t for t in report.run.whatif.timings if t.name == "optimizer.fused")
d210 = next(f for f in report.findings if f.id == "D210")
print(json.dumps({"faults": report.run.optimizers[0].step_page_faults,
                  "started_from": timing.started_from, "how": d210.saving_how, "fix": d210.fix}))
"""


@needs_fault_counts
@pytest.mark.timing  # the allocator's page faults move with a second test worker beside it
def test_the_programs_optimizer_steps_page_faults_are_counted_and_its_clone_pays_them():
    """d210: AdamW's per-tensor step over a 786k-parameter layer; its temporaries' memory went
    back to the system between the program's steps, which faulted it in again (1150-1330 pages
    a step, 1536 the clone's from memory handed back). The clone's step as run is timed so too,
    and the finding says how. A fresh process, as `torchdoctor diagnose` runs: in one that has
    diagnosed before, the allocator's raised thresholds left the program's steps 25-170."""
    script = str(SCRIPTS / "d210_optimizer_loop.py")
    done = subprocess.run(
        [sys.executable, "-c", _D210_IN_A_FRESH_PROCESS, script],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["faults"] > 500, seen
    assert (
        seen["started_from"].startswith("as run ") and "memory handed back" in seen["started_from"]
    )
    assert seen["started_from"] in seen["how"] and seen["fix"].endswith("fused=True)"), seen


@needs_fault_counts
def test_autograd_on_evaluation_forwards_page_faults_start_the_copys_forwards():
    """A forward whose activations, kept for a backward, are freed at once: where the program's
    forwards faulted as much, the copy's start from memory handed back; where they did not, the
    timing starts as the calls come."""
    torch.manual_seed(0)
    layers: list[nn.Module] = []
    for _ in range(8):
        layers += [nn.Linear(64, 64), nn.Tanh()]
    model = nn.Sequential(*layers, nn.Linear(64, 1)).double()
    x = torch.randn(512, 64, dtype=torch.float64)
    paid = measure_evaluation(Replay(model, (x,), {}, "cpu"), True, False, 0.05, None, 1e6)
    assert paid[0].started_from.startswith("as run 100% from memory handed back")
    assert paid[0].started_from in how(paid[0], "an evaluation forward")
    unpaid = measure_evaluation(Replay(model, (x,), {}, "cpu"), True, False, 0.05, None, 0.0)
    assert unpaid[0].started_from == ""
