"""`--try` on real scripts with planted problems, each trial in a fresh worker process."""

from pathlib import Path

import pytest
import torch

from torchdoctor.errors import TorchdoctorError
from torchdoctor.trials.api import run_trials

SCRIPTS = Path(__file__).parent / "scripts"


def variant(report, name):
    return next(v for v in report.variants if v.config.name == name)


def test_float32_speeds_up_a_float64_script_and_keeps_its_losses():
    report = run_trials(str(SCRIPTS / "float64_mlp.py"), [], "float32,pin_memory", steps=3,
                        repeats=1, warmup=1)
    result = variant(report, "float32")
    assert result.config.status == "ok" and result.speedup.median > 1.0, result
    assert result.semantics.verdict == "kept" and result.semantics.compared_steps == 4
    assert report.baseline.losses[0] is not None
    if not torch.cuda.is_available():
        assert "CUDA" in report.not_applicable["pin_memory"]
    assert "float32" in report.permanent_change or result.verdict != "faster"


def test_workers_speed_up_a_data_bound_script_with_identical_losses():
    report = run_trials(str(SCRIPTS / "slow_data.py"), [], "workers", steps=4, repeats=1, warmup=1)
    result = variant(report, "workers")
    assert result.speedup.median > 1.0 and result.throughput_ratio > 1.0, result
    assert result.semantics.verdict == "kept" and result.semantics.max_deviation == 0.0


def test_eval_mode_in_a_training_objective_is_caught_as_changed():
    report = run_trials(str(SCRIPTS / "teacher_dropout.py"), [], "inference_mode", steps=2,
                        repeats=1, warmup=1)
    result = variant(report, "inference_mode")
    assert result.semantics.verdict == "changed" and result.verdict == "changes results"
    assert result.semantics.first_changed_step == 0
    assert report.permanent_change == ""  # nothing is recommended from a changed trial


def test_a_script_that_crashes_without_fixes_is_one_clear_error(tmp_path):
    script = tmp_path / "broken.py"
    script.write_text("import torch\nraise ValueError('bad data path')\n")
    with pytest.raises(TorchdoctorError, match="bad data path"):
        run_trials(str(script), [], "workers", steps=1, repeats=1, warmup=0)
