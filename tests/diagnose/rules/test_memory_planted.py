"""Real scripts with a memory problem planted, diagnosed for real (in this process, CPU): a graph
kept by a loss list, a history that grows every step, a block whose activations dominate,
optimizer state dominating, and an out-of-memory crash."""

from __future__ import annotations

import runpy

import pytest
import torch
from test_planted_scripts import SCRIPTS, one_thread  # noqa: F401 (autouse: one torch thread)

from torchdoctor.diagnose.api import diagnose_script
from torchdoctor.diagnose.probes.activations import ActivationCounter
from torchdoctor.errors import UsageError
from torchdoctor.trainer.modelprep import checkpoint_submodules

# Timing-based diagnoses: run after the rest of the suite, one at a time (tests/conftest.py).
pytestmark = pytest.mark.timing


def diagnose(name: str, status: str = "stopped"):
    report = diagnose_script(str(SCRIPTS / f"{name}.py"), steps=8, warmup=3)
    assert report.run.status == status, (report.run.status, report.run.error)
    return report


def finding(report, code: str):
    found = next((f for f in report.findings if f.id == code), None)
    assert found is not None, [(f.id, f.evidence) for f in report.findings]
    return found


def line_of(name: str, text: str) -> int:
    lines = (SCRIPTS / f"{name}.py").read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def test_a_loss_list_keeping_graphs_is_found_with_its_holder_and_line():
    report = diagnose("d503_loss_list")
    d503 = finding(report, "D503")
    text = " ".join(d503.evidence)
    assert d503.severity == "warning" and "with its autograd graph" in text
    assert "list `losses`" in text
    assert f"d503_loss_list.py:{line_of('d503_loss_list', 'loss.backward()')}" in text
    assert d503.fix.startswith("losses.append(loss.item())")


def test_a_history_concatenated_every_step_grows_memory_and_step_time():
    report = diagnose("d504_growing_history")
    d504 = finding(report, "D504")
    assert d504.saving > 0.1 and d504.details["last_s"] > 1.5 * d504.details["first_s"]
    d503 = finding(report, "D503")
    assert d503.details["growth_bytes_per_step"] > 2 * 2**20  # 8 MiB appended per step
    steps = report.run.steps
    assert all(s.memory_bytes for s in steps) and report.run.memory.step_source == "process_rss"


def test_the_block_holding_the_activations_is_named_for_checkpointing():
    report = diagnose("d505_large_block_activations")
    d505 = finding(report, "D505")
    # its layers each save only their input: checkpointing them one by one would free nothing,
    # the block as one segment frees everything inside it
    assert list(d505.details["modules"]) == ["trunk"]
    memory = report.run.memory
    # (1024, 2048) float32 per saved tensor: stem output, 2 LayerNorms, GELU, Tanh, Sigmoid
    assert 36 * 2**20 <= memory.saved_activation_bytes <= 48 * 2**20
    assert [p.at for p in memory.phases] == [
        "before_forward", "after_forward", "after_backward", "after_optimizer"
    ]  # fmt: skip
    assert memory.phase_source == "process_rss" and memory.gradient_bytes == memory.parameter_bytes


def test_optimizer_state_dominating_is_reported():
    report = diagnose("d502_optimizer_state_dominates")
    d502 = finding(report, "D502")
    assert "Optimizer state is" in d502.evidence[0] and "Adam: state" in " ".join(d502.evidence)


def test_out_of_memory_is_explained_with_the_module_line_and_exit_code():
    report = diagnose("d506_out_of_memory", status="crashed")
    top = report.findings[0]
    assert top.id == "D506" and top.severity == "error"
    text = " ".join(top.evidence)
    line = line_of("d506_out_of_memory", "scores = q @ k")
    assert f"d506_out_of_memory.py:{line}" in text and "inside attn (Attention)" in text
    assert "in forward" in text and "exit code 1" in text and report.run.exit_code == 1
    assert "more than the whole" in text  # 4 x 200k x 200k floats: a shape bug, not a full memory
    oom = report.run.memory.out_of_memory
    assert oom.requested_bytes == 4 * 200_000 * 200_000 * 4 and oom.step == 6


def test_the_reported_module_names_are_what_the_trainer_checkpoints():
    """D505's names, given to the Trainer's activation checkpointing, free what they hold."""
    report = diagnose("d505_large_block_activations")
    names = list(finding(report, "D505").details["modules"])
    script = runpy.run_path(str(SCRIPTS / "d505_large_block_activations.py"))

    def saved_bytes(model) -> int:
        counter = ActivationCounter()
        counter.start()
        try:
            model(torch.randn(256, 32)).sum().backward()
        finally:
            counter.stop()
        return counter.total_bytes()

    plain, checkpointed = script["Net"](), script["Net"]()
    checkpoint_submodules(checkpointed, names)
    before, after = saved_bytes(plain), saved_bytes(checkpointed)
    # the block keeps only its input; the head still saves its output: 2 of the 5 tensors
    assert after < 0.45 * before, (before, after)
    with pytest.raises(UsageError):
        checkpoint_submodules(script["Net"](), ["trunk.nope"])
    checkpoint_submodules(script["Net"](), ["module." + names[0]])  # as a DDP-wrapped report


def test_a_running_total_keeping_graphs_is_found_by_its_variable():
    report = diagnose("d503_running_total")
    d503 = finding(report, "D503")
    text = " ".join(d503.evidence)
    assert "variable `total_loss`" in text and "autograd graphs of about" in text
    assert d503.fix.startswith("total_loss += loss.item()")
