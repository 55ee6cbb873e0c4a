"""The report builder on hand-made observations: breakdown shares, the verdict for each kind of
bottleneck, runs without steps, and the plain-text terminal report."""

import io

import pytest
from rich.console import Console

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation, StepObservation
from torchdoctor.diagnose.report import build_report
from torchdoctor.diagnose.report.terminal import render_terminal


def _run(phases: dict, steps: int = 4, **fields) -> RunObservation:
    full = {p: 0.0 for p in ("data", "h2d", "forward", "backward", "optimizer", "other")}
    full.update(phases)
    wall = sum(full.values())
    return RunObservation(
        target="t.py",
        steps=[StepObservation(i, wall, dict(full), batch_size=32) for i in range(steps)],
        **fields,
    )


@pytest.mark.parametrize(
    "phases, verdict",
    [
        ({"data": 0.071, "forward": 0.02, "other": 0.009}, "data-loading bound: 71% of step time"),
        ({"h2d": 0.6, "forward": 0.4}, "transfer bound: 60% of step time copying"),
        ({"forward": 0.3, "backward": 0.5, "data": 0.2}, "compute bound: 80% of step time"),
        ({"other": 0.7, "forward": 0.3}, "host-overhead bound: 70% of step time"),
    ],
)
def test_verdict_names_the_largest_share(phases, verdict):
    report = build_report(_run(phases), [])
    assert report.verdict.startswith(verdict), report.verdict
    assert abs(sum(report.breakdown.values()) - 1) < 1e-9
    assert report.step_time_s == pytest.approx(sum(phases.values()))
    assert report.samples_per_s == pytest.approx(32 / sum(phases.values()))


def test_verdict_names_the_top_fix_and_the_crash():
    title = "DataLoader runs in the main process"
    finding = Finding("D101", title, "warning", 0.5, ["e"], "f", "s")
    run = _run({"data": 0.8, "forward": 0.2}, status="crashed", error="ValueError: x")
    report = build_report(run, [finding])
    assert report.verdict == (
        "[crashed after 4 measured steps] data-loading bound: 80% of step time waiting for "
        "batches; top fix: DataLoader runs in the main process (~50% of run time, estimate)"
    )


def test_no_steps_gives_an_empty_breakdown_and_says_why():
    run = RunObservation(target="t.py", status="no_training_loop", forwards_seen=3)
    report = build_report(run, [])
    assert report.breakdown == {} and report.step_time_s is None
    assert report.reason.no_steps.why == "no_training_loop"  # data; the words come from prose
    assert report.verdict == (
        "no training loop seen: no backward() or optimizer step "
        "(3 model forward pass(es) but no backward())"
    )
    stalled = build_report(RunObservation("t.py", status="no_training_loop", backwards_seen=2), [])
    assert stalled.verdict == (
        "no training step completed: backward() ran 2 time(s) but no optimizer step"
    )
    crashed = build_report(RunObservation("t.py", status="crashed", error="OSError: x"), [])
    assert crashed.verdict == "no training step measured: the script crashed first (OSError: x)"


def test_plain_terminal_report_has_letter_bar_findings_and_verdict():
    finding = Finding("D101", "Slow loader", "warning", 0.5, ["waited 5 ms"], "num_workers=4", "s")
    report = build_report(_run({"data": 0.5, "forward": 0.5}), [finding])
    out = io.StringIO()
    render_terminal(report, Console(file=out, force_terminal=False, no_color=True, width=120))
    text = out.getvalue()
    assert "[" + "D" * 25 + "F" * 25 + "]" in text
    assert "1. D101 [warning] Slow loader (saves ~50% of run time, estimate)" in text
    finding.saving_basis, finding.seconds_per_epoch = "measured", 12.5
    out = io.StringIO()
    render_terminal(report, Console(file=out, force_terminal=False, no_color=True, width=120))
    assert "(saves ~50% of run time, 12.5 s per epoch, measured)" in out.getvalue()
    assert "waited 5 ms" in text and "num_workers=4" in text
    assert text.strip().endswith(f"verdict: {report.verdict}")


def test_a_saving_that_rounds_to_zero_is_not_listed_as_a_saving():
    # the demo's report listed D401 "saves ~0% of run time, 0.0 s per epoch, measured"
    sync = Finding("D401", "Host syncs", "info", 0.003, ["2 syncs a step"], "drop .item()", "s")
    sync.saving_basis, sync.seconds_per_epoch = "measured", 0.001
    habit = Finding("D303", "no_grad eval", "info", 0.0, ["eval"], "inference_mode", "s")
    small = Finding("D210", "Optimizer loop", "info", 0.012, ["loop"], "foreach", "s")
    small.seconds_per_epoch = 0.01
    report = build_report(_run({"data": 0.5, "forward": 0.5}), [sync, habit, small])
    out = io.StringIO()
    render_terminal(report, Console(file=out, force_terminal=False, no_color=True, width=120))
    text = out.getvalue()
    assert "Host syncs (no time saving measured on this run)" in text
    assert "no_grad eval (no time saving claimed)" in text
    assert "Optimizer loop (saves ~1% of run time, estimate)" in text  # no "0.0 s per epoch"
    assert "~0%" not in text and "0.0 s per epoch" not in text
