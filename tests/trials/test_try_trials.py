"""`--try` on real scripts with planted problems, each trial in a fresh worker process."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from torchdoctor.cli import cli
from torchdoctor.errors import TorchdoctorError
from torchdoctor.trials.api import run_trials

SCRIPTS = Path(__file__).parent / "scripts"


def variant(report, name):
    return next(v for v in report.variants if v.config.name == name)


# Timing-based (a speed-up read from the runs): after the rest of the suite, one at a time
# (tests/conftest.py). The other tests here read a verdict on the losses, a crash or an error.
@pytest.mark.timing
def test_float32_speeds_up_a_float64_script_and_keeps_its_losses():
    report = run_trials(
        str(SCRIPTS / "float64_mlp.py"), [], "float32,pin_memory", steps=8, repeats=1, warmup=1
    )
    result = variant(report, "float32")
    # CPU time per step: steadier than wall time on a machine shared with other jobs
    assert result.config.status == "ok" and result.cpu_speedup.median > 1.0, result
    assert result.semantics.verdict == "kept" and result.semantics.compared_steps == 9
    assert 0 < result.semantics.max_deviation < 1e-5  # float64 vs float32: real, tiny
    assert report.baseline.losses[0] is not None
    if not torch.cuda.is_available():
        assert "CUDA" in report.not_applicable["pin_memory"]
    assert "float32" in report.permanent_change or result.verdict != "faster"


def run_cli(*args):
    # a wide "terminal": the table's cells stay on one line (piped output honours COLUMNS)
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "torchdoctor", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


@pytest.mark.timing
def test_diagnose_try_workers_speeds_up_a_data_bound_script_and_adds_the_json_section(tmp_path):
    report_path = tmp_path / "report.json"
    result = run_cli(
        "diagnose",
        "--steps",
        "4",
        "--warmup",
        "2",
        "--repeats",
        "1",
        "--try",
        "workers",
        "--json",
        str(report_path),
        str(SCRIPTS / "slow_data.py"),
    )
    assert result.returncode == 0, result.stderr
    assert "--try on" in result.stdout
    trials = json.loads(report_path.read_text())["trials"]
    assert trials["schema_version"] == 1 and trials["baseline"]["status"] == "ok"
    (workers,) = trials["variants"]
    assert workers["speedup"]["median"] > 1.0 and workers["throughput_ratio"] > 1.0, workers
    assert workers["semantics"]["verdict"] == "kept" and workers["semantics"]["max_deviation"] == 0
    assert "kept (identical)" in result.stdout
    # one repeat: the baseline ran twice (spread measured), but a single paired run is no verdict
    assert trials["baseline"]["runs"] == 2 and trials["baseline_spread"] is not None
    assert workers["verdict"] == "no clear gain" and "1 repeat(s): too few runs" in result.stdout
    # a loader fix is read on wall time; one round gives no paired interval, and the report says
    # which clock decided
    assert workers["decided_on"] == "wall" and workers["interval"] is None
    assert "workers: no clear gain on wall time: median" in result.stdout


def test_diagnose_try_with_an_unknown_fix_is_one_line_and_exit_2_before_running():
    result = CliRunner().invoke(
        cli, ["diagnose", "--try", "workers,turbo", str(SCRIPTS / "slow_data.py")]
    )
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("torchdoctor: error: ") and "turbo" in result.stderr
    assert result.stderr.strip().count("\n") == 0 and "--try on" not in result.stdout


def test_eval_mode_in_a_training_objective_is_caught_as_changed():
    report = run_trials(
        str(SCRIPTS / "teacher_dropout.py"), [], "inference_mode", steps=2, repeats=1, warmup=1
    )
    result = variant(report, "inference_mode")
    assert result.semantics.verdict == "changed" and result.verdict == "changes results"
    assert result.semantics.first_changed_step == 0
    assert report.permanent_change == ""  # nothing is recommended from a changed trial


def test_a_script_that_crashes_without_fixes_is_one_clear_error(tmp_path):
    script = tmp_path / "broken.py"
    script.write_text("import torch\nraise ValueError('bad data path')\n")
    with pytest.raises(TorchdoctorError, match="bad data path"):
        run_trials(str(script), [], "workers", steps=1, repeats=1, warmup=0)


def test_a_variant_that_crashes_is_reported_and_the_other_fixes_still_run():
    report = run_trials(
        str(SCRIPTS / "conv_view.py"), [], "channels_last,float32", steps=1, repeats=1, warmup=1
    )
    crashed = variant(report, "channels_last")
    assert crashed.verdict == "crashed" and "view" in crashed.config.error
    assert "conv_view.py" in crashed.config.stderr_tail  # the user's traceback, kept for the report
    untouched = variant(report, "float32")  # a float32 script: nothing to convert
    assert untouched.verdict == "no effect" and untouched.semantics.verdict == "kept"
