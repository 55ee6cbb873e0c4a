"""Real scripts with one problem planted each, diagnosed for real: the rule must come out on top.

Each script in scripts/ is a small, ordinary training loop (plain loops, hand-written SGD, a
Lightning-style module) that runs a few milliseconds per step. They run in this process through
`diagnose_script` (steps=8 after 3 warm-up steps). Torch runs with one intra-op thread: on a
shared two-core machine, two OpenMP threads make tiny steps 100x slower at random, which would
measure the machine rather than the script.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from planted import one_thread  # noqa: F401  (autouse fixture: one torch thread)

from torchdoctor.diagnose.api import diagnose_script

# Timing-based diagnoses: run after the rest of the suite, one at a time (tests/conftest.py).
pytestmark = pytest.mark.timing

SCRIPTS = Path(__file__).parent / "scripts"


# A verdict that names data loading as the dominant phase above this share must come with a
# finding that addresses it (a D1xx data-loading rule), never with only unrelated advice.
DOMINANT_SHARE = 0.5


def diagnose(name: str):
    report = diagnose_script(str(SCRIPTS / f"{name}.py"), steps=8, warmup=3)
    assert report.run.status == "stopped", (report.run.status, report.run.error)
    assert len(report.run.steps) == 8
    assert_dominant_data_phase_is_addressed(report)
    return report


def assert_dominant_data_phase_is_addressed(report) -> None:
    if report.dominant_phase == "data" and report.breakdown["data"] > DOMINANT_SHARE:
        found = [(f.id, f.saving) for f in report.findings]
        assert any(f.id.startswith("D1") for f in report.findings), (report.verdict, found)


def codes(report) -> list[str]:
    return [f.id for f in report.findings]


def serious(report) -> list[str]:
    return [f.id for f in report.findings if f.severity != "info"]


def test_clean_loop_gets_no_warning():
    report = diagnose("clean_loop")
    assert serious(report) == [], [(f.id, f.evidence) for f in report.findings]
    # its loaders fetch whole batches: no data finding, and no data what-if to skip or run
    assert not [c for c in codes(report) if c.startswith("D1")], codes(report)
    assert not [t for t in report.run.whatif.timings if t.name.startswith("data.")]
    assert not [s for s in report.run.whatif.skipped if "fetch" in s or "worker" in s]


def test_recurrent_module_on_cpu_is_not_a_python_loop():
    # nn.GRU on CPU runs as many small ATen ops per time step inside one call: not D203's loop
    report = diagnose("clean_gru_language_model")
    assert report.run.compute.ops_per_step > 3 * report.run.compute.python_calls_per_step
    assert "D203" not in codes(report), [(f.id, f.evidence) for f in report.findings]
    assert serious(report) == [], [(f.id, f.evidence) for f in report.findings]


@pytest.mark.filterwarnings("ignore:Creating a tensor from a list of numpy.ndarrays")
@pytest.mark.parametrize(
    "script, code",
    [
        ("d103_workers_respawned", "D103"),
        ("d107_next_iter_every_step", "D107"),
        ("d108_tensordataset_fetch", "D108"),
        ("d109_tensordataset_workers", "D109"),
        ("d110_workers_at_cores", "D110"),
        ("d111_slow_collate", "D111"),
        ("d112_tiny_batches_workers", "D112"),
        ("d106_tensor_from_list", "D106"),
        ("d201_float64", "D201"),
        ("d202_batch_too_small", "D202"),
        ("d203_python_loop", "D203"),
        ("d203_rnn_cell_loop", "D203"),
        ("d701_checkpoint_every_step", "D701"),
        ("d210_optimizer_loop", "D210"),
        ("d220_zero_grad_zero_fill", "D220"),
        ("d702_print_every_step", "D702"),
    ],
)
def test_planted_problem_is_the_top_finding(script, code):
    report = diagnose(script)
    if not report.findings or report.findings[0].id != code:
        # timing-based rules (data waits against step time) on a machine whose two cores both
        # run tests: one more diagnosis; the planted problem must be on top of one of the two
        report = diagnose(script)
    top = report.findings[0] if report.findings else None
    found = [(f.id, f.saving, f.evidence) for f in report.findings]
    workers = [t for t in report.run.whatif.timings if t.name == "data.workers"]
    if code == "D101" and workers and "D101" not in [f.id for f in report.findings]:
        # a short run's what-if budget now fits the workers probe: where it measured workers
        # no faster on this machine (busy cores; their start-up spread over an epoch), D101
        # says nothing, as its docstring says; the wait is still addressed (D1xx)
        return
    assert top is not None and top.id == code, (found, report.breakdown, report.run.optimizers)
    # a measured saving is what it is (D301: autograd may cost little time, the finding is about
    # memory too); an estimate must be worth stating
    assert top.saving > (0.0 if top.saving_basis == "measured" else 0.05), found
    assert any(ch.isdigit() for ch in " ".join(top.evidence))


@pytest.mark.parametrize(
    "script, planted",
    [
        ("multi_float64_adam_eval", {"D201", "D210", "D301"}),
        ("multi_anomaly_adamw", {"D211", "D210"}),
        ("multi_profiler_sgd_zero_fill", {"D212", "D210", "D220"}),
        ("multi_respawn_adam", {"D103", "D210"}),
    ],
)
def test_every_problem_of_a_script_with_several_is_found(script, planted):
    """bench/calibration.py ranks these findings against the gains of their --try fixes: each
    problem has one, so the order between tried fixes is what the bench checks."""
    report = diagnose(script)
    if not planted <= set(codes(report)):  # shares of the step near a rule's line: once more
        report = diagnose(script)
    found = [(f.id, f.saving, f.saving_basis) for f in report.findings]
    assert planted <= set(codes(report)), (found, report.breakdown)


def test_small_batch_through_wide_layers_is_found_by_the_batch_whatif():
    # round 4's miss: a batch of 2 through 512-wide layers, ops 6-16x the trivial-op cost (the
    # estimate's 10x line, crossed with the load); only the measured time per sample decides.
    # The CLI diagnoses its whole 2048-step epoch; 8 steps' 10% would not pay for the what-if
    report = diagnose_script(
        str(SCRIPTS / "d202_wide_mlp_batch_of_two.py"), steps=8, warmup=3, whatif_budget_s=3.0
    )
    found = [(f.id, f.saving, f.saving_basis, f.evidence) for f in report.findings]
    d202 = next((f for f in report.findings if f.id == "D202"), None)
    assert d202 is not None and d202.saving_basis == "measured", (found, report.run.whatif)
    assert codes(report)[0] == "D202", found
    assert "batch_size=" in d202.fix and "lr=" in d202.fix


def test_eval_with_autograd_every_other_step_comes_after_evaluating_less_often():
    # validation every 2nd step is most of the run: evaluating less often (D304) saves more
    # than running it under inference_mode (D301), and both are said
    report = diagnose("d301_eval_with_autograd")
    found = [(f.id, f.saving, f.saving_basis) for f in report.findings]
    assert codes(report)[0] == "D304" and "D301" in codes(report), found
    d304, d301 = report.findings[0], next(f for f in report.findings if f.id == "D301")
    assert d301.saving < d304.saving and any(ch.isdigit() for ch in " ".join(d301.evidence))
    # a measured saving is what it is: autograd costs this 3-layer MLP's forward a few percent,
    # near any threshold (measured 0.97x-1.14x at load 15); an estimate must be worth stating
    assert d301.saving >= (0.0 if d301.saving_basis == "measured" else 0.05), found


def test_expensive_getitem_outranks_everything_but_adding_workers():
    report = diagnose("d105_expensive_getitem")
    # D101 (workers) also applies; with spare cores it can save more than caching the work.
    ranked = [c for c in codes(report) if c != "D101"]
    assert ranked and ranked[0] == "D105", (
        [(f.id, f.saving, f.evidence) for f in report.findings],
        report.breakdown,
    )
    d105 = next(f for f in report.findings if f.id == "D105")
    assert d105.severity == "warning" and "per sample" in d105.evidence[0]


@pytest.mark.parametrize(
    "script, code",
    [("d302_eval_in_train_mode", "D302"), ("d209_clip_before_unscale", "D209")],
)
def test_correctness_errors_are_the_top_and_only_serious_finding(script, code):
    report = diagnose(script)
    assert serious(report) == [code], [(f.id, f.severity, f.evidence) for f in report.findings]
    assert codes(report)[0] == code  # errors rank first
    finding = next(f for f in report.findings if f.id == code)
    assert finding.severity == "error" and f"{script}.py:" in " ".join(finding.evidence)


def test_item_per_step_is_reported_with_its_line_on_cpu_as_info():
    report = diagnose("d201_float64")
    sync = next(f for f in report.findings if f.id == "D401")
    # measured: the time inside .item() itself, a conversion of microseconds on CPU
    assert sync.severity == "info" and sync.saving_basis == "measured"
    assert 0.0 < sync.saving < 0.02 and 0.0 < sync.details["sync_s_per_step"] < 0.001
    lines = (SCRIPTS / "d201_float64.py").read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "loss.item()" in text)
    assert f"d201_float64.py:{line}" in " ".join(sync.evidence)


def test_cli_reports_main_process_loading_first_in_json(tmp_path):
    out = tmp_path / "report.json"
    script = SCRIPTS / "d101_main_process_loading.py"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "torchdoctor",
            "diagnose",
            "--json",
            str(out),
            "--steps",
            "8",
            str(script),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    workers = [t for t in report["run"]["whatif"]["timings"] if t["name"] == "data.workers"]
    if workers and "D101" not in [f["id"] for f in report["findings"]]:
        # measured: workers (their start-up spread over an epoch included) do not pay on this
        # machine (busy cores): no advice to add them
        return
    found = [(f["id"], f["saving"]) for f in report["findings"]]
    d101 = next(f for f in report["findings"] if f["id"] == "D101")
    assert f"{script.name}:" in " ".join(d101["evidence"]) and "num_workers=" in d101["fix"]
    assert d101["saving"]["basis"] == ("measured" if workers else "estimated")
    if not workers:  # the estimate (workers hide the whole wait) ranks it first
        assert report["findings"][0]["id"] == "D101", found
    assert "D101" in done.stdout


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")
def test_anomaly_detection_left_on_is_a_warning():
    report = diagnose("d211_anomaly_detection")
    finding = next((f for f in report.findings if f.id == "D211"), None)
    assert finding is not None, [(f.id, f.saving) for f in report.findings]
    assert finding.severity == "warning" and "D211" in serious(report)
    assert "set_detect_anomaly(False)" in finding.fix and finding.saving > 0.01
    # anomaly mode's extra ops and per-op cost are not taken for a tiny-op loop or a small batch
    assert not set(codes(report)) & {"D202", "D203"}, codes(report)
    # measured on a copy (the what-if) unless its share of the what-if budget was too short
    phases = report.breakdown
    assert finding.saving <= phases["forward"] + phases["backward"] + 1e-9
    if any(t.name == "anomaly.off" for t in report.run.whatif.timings):
        assert finding.saving_basis == "measured", finding.saving_how
    else:
        assert any("anomaly" in why for why in report.run.whatif.skipped), report.run.whatif


def test_host_reads_per_sample_state_the_time_measured_inside_them():
    report = diagnose("d401_item_per_sample")
    sync = next(f for f in report.findings if f.id == "D401")
    sites = sync.details["sites"]
    assert sync.details["syncs_per_step"] == 32 and sites[0]["kind"] == "item"
    # measured inside the 32 reads: more than nothing, less than the step's time outside the
    # model where they run; the saving keeps the reads of every 10th step
    spent = sync.details["sync_s_per_step"]
    step_s = report.step_time_s
    assert 0 < spent < report.breakdown["other"] * step_s * 1.5, (spent, report.breakdown)
    assert sync.saving_basis == "measured" and sync.severity == "info"  # CPU: a conversion
    assert 0 < sync.saving < report.breakdown["other"] + 0.05
