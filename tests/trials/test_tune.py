"""`torchdoctor tune`: batch-size search under a real (synthetic) memory cap, OOM recovery, CLI."""

import json
import subprocess
import sys
from pathlib import Path

import torch
from click.testing import CliRunner

from torchdoctor.cli import cli
from torchdoctor.recipes.loading import load_recipe
from torchdoctor.trainer import TrainerConfig
from torchdoctor.trials.tuning.batch_search import find_max_batch
from torchdoctor.trials.tuning.oom import MemoryCap, is_oom
from torchdoctor.trials.tuning.probe import RecipeProber

RECIPE = str(Path(__file__).parent / "recipes" / "tiny_mlp.py")


def test_search_doubles_then_bisects_to_the_exact_limit():
    result = find_max_batch(lambda size: size <= 37, start=1, limit=1024, margin=0.9)
    assert (result.largest_fit, result.first_failure, result.recommended) == (37, 38, 33)
    assert [size for size, _ in result.probes][:7] == [1, 2, 4, 8, 16, 32, 64]
    assert len(result.probes) <= 7 + 5  # bisection of (32, 64) takes log2(32) probes


def activation_bytes_per_sample(model) -> int:
    with MemoryCap(model, cap_bytes=2**62) as cap:
        model(torch.randn(1, 16))
    return cap.peak


def test_batch_search_with_the_trainer_finds_the_limit_of_a_memory_cap():
    recipe = load_recipe(RECIPE)
    per_sample = activation_bytes_per_sample(recipe.model)
    cap = per_sample * 37 + per_sample // 2  # batch 37 fits, 38 does not
    prober = RecipeProber(
        recipe, TrainerConfig(workers=0, quiet=True), steps=2, warmup=1, memory_cap=cap
    )
    result = find_max_batch(prober.fits, start=1, limit=len(recipe.train_data))
    assert (result.largest_fit, result.first_failure) == (37, 38)


def test_an_oom_mid_trial_restores_the_model_and_the_next_trial_runs():
    recipe = load_recipe(RECIPE)
    before = {k: v.clone() for k, v in recipe.model.state_dict().items()}
    prober = RecipeProber(
        recipe,
        TrainerConfig(workers=0, quiet=True),
        steps=2,
        warmup=1,
        memory_cap=activation_bytes_per_sample(recipe.model) * 20,
    )
    assert prober.fits(64) is False  # raised the allocator's OOM inside Trainer.fit
    after = recipe.model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert prober.fits(8) is True
    result = prober.run(evaluate=True, batch_size=8)
    assert result.ok and result.samples_per_s > 0 and result.val_accuracy is not None
    assert is_oom(RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried"))
    assert is_oom(torch.cuda.OutOfMemoryError("CUDA out of memory")) and is_oom(MemoryError())


def run_cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "torchdoctor", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def test_tune_cli_end_to_end_writes_a_config_that_train_accepts(tmp_path):
    report_path, config_path = tmp_path / "tune.json", tmp_path / "config.json"
    # the batch search has its own test above; here: worker sweep + ablation + outputs
    result = run_cli(
        "tune",
        RECIPE,
        "-o",
        "n_train=128",
        "--steps",
        "2",
        "--warmup",
        "1",
        "--stages",
        "amp",
        "--repeats",
        "2",
        "--no-batch-search",
        "--json",
        str(report_path),
        "--write-config",
        str(config_path),
    )
    assert result.returncode == 0, result.stderr
    assert "data wait share" in result.stdout and "baseline" in result.stdout
    assert "range (repeats)" in result.stdout  # the spread of the repeats is shown
    report = json.loads(report_path.read_text())
    assert report["schema_version"] == 1 and report["batch"] is None
    assert [p["workers"] for p in report["workers"]][:2] == [0, 1]
    assert report["ablation"]["cumulative"][0]["label"] == "baseline"
    assert all(len(row["rates"]) == 2 for row in report["ablation"]["cumulative"])
    config = json.loads(config_path.read_text())
    assert TrainerConfig.from_dict(config).batch_size == 32  # the tuner never changes the batch
    config.update(max_steps=2, quiet=True)
    config_path.write_text(json.dumps(config))
    trained = run_cli("train", RECIPE, "--config", str(config_path))
    assert trained.returncode == 0, trained.stderr


def test_tune_cli_stage_names_match_the_ablation_stages():
    from torchdoctor.cli.tune import STAGE_NAMES
    from torchdoctor.trials.tuning.ablation import STAGES

    assert STAGE_NAMES == STAGES


def test_tune_bad_stage_is_one_line_and_exit_2():
    result = CliRunner().invoke(cli, ["tune", RECIPE, "--stages", "data,warp"])
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("torchdoctor: error: ") and "warp" in result.stderr
    assert result.stderr.strip().count("\n") == 0


def test_output_files_in_a_missing_directory_are_refused_before_any_work(tmp_path):
    # QA3 F18: tune found this only after the whole run (results lost); train likewise
    missing = tmp_path / "nodir"
    for command, flag in (("tune", "--json"), ("tune", "--write-config"), ("train", "--json")):
        done = subprocess.run(
            [sys.executable, "-m", "torchdoctor", command, "shapes", flag, str(missing / "o.json")],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2, done.stderr
        assert done.stderr.strip() == (
            f"torchdoctor: error: {flag} {missing / 'o.json'}: directory {missing} does not exist"
        )
        assert done.stdout == ""


def test_accumulation_plan_keeps_the_global_batch():
    from torchdoctor.trials.tuning.batch_search import plan_accumulation

    plan = plan_accumulation(256, 90)
    assert (plan.micro_batch, plan.accumulate, plan.effective_batch) == (64, 4, 256)
    assert plan_accumulation(64, 64).accumulate == 1
    prime = plan_accumulation(97, 40)  # no exact split within 2x the fewest steps
    assert prime.accumulate == 3 and prime.micro_batch <= 40 and prime.effective_batch >= 97


def test_tune_lowers_the_micro_batch_and_raises_accumulation_under_a_memory_cap():
    from torchdoctor.trials.tuning.tune import TuneOptions, tune

    recipe = load_recipe(RECIPE)
    per_sample = activation_bytes_per_sample(recipe.model)
    options = TuneOptions(
        steps=1, warmup=1, max_batch=128, memory_cap=per_sample * 37 + per_sample // 2,
        stages=("amp",), sweep=False,
    )  # fmt: skip
    report = tune(recipe, TrainerConfig(workers=0, quiet=True, batch_size=64), options)
    assert report.batch.largest_fit == 37 and report.batch.recommended == 33  # 10% margin
    plan = report.accumulation
    assert (plan.global_batch, plan.micro_batch, plan.accumulate) == (64, 32, 2)
    assert (report.config["batch_size"], report.config["accumulate"]) == (32, 2)
    assert any("global batch 64 kept: micro-batch 32 x 2" in note for note in report.notes)
    baseline = report.ablation.cumulative[0].result
    assert baseline.ok, baseline.error  # the ablation ran the micro-batch that fits
