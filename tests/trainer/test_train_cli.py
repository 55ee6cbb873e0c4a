"""`torchdoctor train`: a real run on a user recipe file, settings precedence, one-line errors."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

RECIPE = textwrap.dedent(
    """
    import torch
    from torch import nn
    from torch.utils.data import TensorDataset
    import torchdoctor

    def recipe(n=48):
        g = torch.Generator().manual_seed(0)
        x = torch.randn(int(n), 8, generator=g)  # CLI options arrive as strings
        y = (x[:, 0] > 0).long()
        return torchdoctor.Recipe(
            name="tiny", model=nn.Linear(8, 2), train_data=TensorDataset(x, y),
            val_data=TensorDataset(x, y), loss_fn=nn.CrossEntropyLoss(),
            optimizer=lambda p: torch.optim.SGD(p, lr=0.1),
            defaults={"epochs": 2, "batch_size": 16, "workers": 0, "clip_norm": 5.0},
        )
    """
)


def run_train(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "torchdoctor", "train", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


@pytest.fixture
def recipe_file(tmp_path):
    path = tmp_path / "tiny_recipe.py"
    path.write_text(RECIPE)
    return path


def test_train_runs_a_user_recipe_with_layered_settings(recipe_file, tmp_path):
    config = tmp_path / "tuned.json"
    config.write_text(json.dumps({"epochs": 3, "batch_size": 8}))
    out = tmp_path / "history.json"
    result = run_train(
        recipe_file, "--config", config, "--epochs", "1", "-o", "n=40", "--json", out
    )
    assert result.returncode == 0, result.stderr
    assert "loss" in result.stdout and "samples" in result.stdout  # the final table

    payload = json.loads(out.read_text())
    assert payload["schema"] == "torchdoctor.train.history/1"
    settings = payload["config"]
    # flag (epochs 1) > config file (batch 8) > recipe defaults (clip 5) > TrainerConfig defaults
    assert (settings["epochs"], settings["batch_size"], settings["clip_norm"]) == (1, 8, 5.0)
    assert settings["accumulate"] == 1
    assert payload["resolved"]["device"] == "cpu" and payload["resolved"]["precision"] == "fp32"
    (epoch,) = payload["epochs"]
    assert epoch["steps"] == 5  # 40 samples (recipe option n=40) / batch 8
    assert epoch["grad_norm"] > 0 and epoch["val_loss"] is not None


def test_quiet_prints_nothing(recipe_file):
    result = run_train(recipe_file, "--quiet", "--max-steps", "1")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--batch-size", "0"], "--batch-size"),
        (["--accumulate", "-1"], "--accumulate"),
        (["--precision", "fp8"], "fp8"),
        (["--workers", "x"], "--workers"),
        (["--clip", "0"], "--clip"),
        (["--config", "missing.json"], "missing.json"),
        (["--no-such-flag"], "--no-such-flag"),
    ],
)
def test_bad_values_exit_2_with_one_line(recipe_file, args, fragment):
    result = run_train(recipe_file, *args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("torchdoctor: error:"), result.stderr
    assert fragment in lines[0]


def test_unknown_setting_in_config_file_is_one_line(recipe_file, tmp_path):
    config = tmp_path / "bad.json"
    config.write_text(json.dumps({"batch_sise": 8}))
    result = run_train(recipe_file, "--config", config)
    assert result.returncode == 2
    assert result.stderr.strip() == "torchdoctor: error: unknown trainer setting(s): batch_sise"


@pytest.mark.parametrize(
    "setting, message",
    [
        ({"checkpoint_dir": 5}, "checkpoint_dir must be a path string, got 5"),  # QA3 F1
        (
            {"activation_checkpointing": "02"},  # QA3 F2: not iterated per character
            "activation_checkpointing must be a list of submodule names, got '02'",
        ),
        (
            {"resume": "false", "checkpoint_dir": "ckpt"},
            "resume must be true or false, got 'false'",
        ),
        ({"clip_norm": "1.0"}, "clip_norm must be a number > 0, got '1.0'"),
    ],
)
def test_wrong_types_in_config_file_exit_2_before_training(recipe_file, tmp_path, setting, message):
    config = tmp_path / "typed.json"
    config.write_text(json.dumps(setting))
    result = run_train(recipe_file, "--config", config, "--json", tmp_path / "h.json", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == f"torchdoctor: error: {message}"
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "h.json").exists() and not (tmp_path / "ckpt").exists()  # nothing ran


def test_a_recipe_that_does_not_seed_its_model_init_is_reproducible(recipe_file, tmp_path):
    # QA3 F3: the tiny recipe builds nn.Linear without seeding; --seed must cover its init
    def losses(name, *extra):
        out = tmp_path / name
        result = run_train(recipe_file, "--quiet", "--epochs", "1", "--json", out, *extra)
        assert result.returncode == 0, result.stderr
        return [e["train_loss"] for e in json.loads(out.read_text())["epochs"]]

    first = losses("a.json")
    assert losses("b.json") == first
    assert losses("c.json", "--seed", "1") != first  # the seed is what decides


def test_resume_from_another_models_checkpoint_is_one_line_and_keeps_the_file(
    recipe_file, tmp_path
):
    # QA3 F4: load_state_dict's RuntimeError reached the user as a traceback
    ckpt = tmp_path / "ckpt"
    first = run_train(recipe_file, "--quiet", "--checkpoint-dir", ckpt, "--max-steps", "2")
    assert first.returncode == 0, first.stderr
    saved = {p.name: p.read_bytes() for p in ckpt.iterdir()}
    other = tmp_path / "other_recipe.py"
    other.write_text(recipe_file.read_text().replace("nn.Linear(8, 2)", "nn.Linear(8, 3)"))
    result = run_train(other, "--quiet", "--checkpoint-dir", ckpt, "--resume")
    assert result.returncode == 1
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(
        f"torchdoctor: error: cannot resume from {ckpt / 'ckpt-000000002.pt'}: "
        "its model does not match this run's ("
    )
    assert "size mismatch for weight" in line
    assert {p.name: p.read_bytes() for p in ckpt.iterdir()} == saved  # nothing lost


def test_ctrl_c_exits_130_and_says_what_survived(tmp_path):
    # QA3 F5: click turned SIGINT into "Aborted!" and exit 1, like any failure
    import signal
    import time

    recipe = Path(__file__).resolve().parent / "crash_recipe.py"
    ckpt = tmp_path / "ckpt"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "torchdoctor",
            "train",
            str(recipe),
            "-o",
            "sleep=0.02",
            "--quiet",
            "--batch-size",
            "16",
            "--workers",
            "0",
            "--checkpoint-dir",
            str(ckpt),
            "--checkpoint-every",
            "2",
            "--epochs",
            "50",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not any(ckpt.glob("ckpt-*.pt")) and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130
    (line,) = stderr.strip().splitlines()
    assert line.startswith("torchdoctor: interrupted at step ")
    assert f"; newest checkpoint {ckpt}" in line and line.endswith(
        "rerun with --resume to continue from it"
    )


def test_loader_flags_on_a_recipe_with_a_ready_dataloader_warn_and_json_tells_the_truth(tmp_path):
    # QA3 F9: --batch-size/--workers were silently ignored and --json claimed them as applied
    recipe = tmp_path / "dl_recipe.py"
    recipe.write_text(
        RECIPE.replace(
            "train_data=TensorDataset(x, y)",
            "train_data=torch.utils.data.DataLoader(TensorDataset(x, y), batch_size=8)",
        )
    )
    out = tmp_path / "h.json"
    result = run_train(
        recipe, "--quiet", "--epochs", "1", "--batch-size", "4", "--workers", "2", "--json", out
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == (
        "torchdoctor: warning: the recipe's train_data is a ready DataLoader, used as given: "
        "batch_size, workers do not apply to it (return a Dataset to let torchdoctor build the loader)"
    )
    payload = json.loads(out.read_text())
    assert payload["epochs"][0]["steps"] == 6  # 48 samples in the loader's batches of 8
    assert payload["resolved"]["workers"] == 0 and payload["resolved"]["pin_memory"] is False


def test_resume_says_where_it_continued_or_that_it_started_fresh(recipe_file, tmp_path):
    # QA3 F10: a resume printed nothing, even when there was nothing left to train
    ckpt = tmp_path / "ckpt"
    fresh = run_train(recipe_file, "--checkpoint-dir", ckpt, "--resume", "--epochs", "2")
    assert fresh.returncode == 0, fresh.stderr
    assert fresh.stderr.strip() == f"torchdoctor: no checkpoint in {ckpt}: started from scratch"
    again = run_train(recipe_file, "--checkpoint-dir", ckpt, "--resume", "--epochs", "1")
    assert again.returncode == 0, again.stderr
    assert again.stderr.strip() == (
        f"torchdoctor: resumed from {ckpt / 'ckpt-000000006.pt'} at step 6: nothing left to train "
        "(it already reached --epochs/--max-steps)"
    )
    out = tmp_path / "h.json"
    more = run_train(
        recipe_file, "--checkpoint-dir", ckpt, "--resume", "--epochs", "3", "--json", out
    )
    assert more.returncode == 0, more.stderr
    assert (
        more.stderr.strip() == f"torchdoctor: resumed from {ckpt / 'ckpt-000000006.pt'} at step 6"
    )
    assert [e["steps"] for e in json.loads(out.read_text())["epochs"]] == [3, 6, 9]


@pytest.mark.parametrize(
    "change, doing, error",
    [
        (
            ("lr=0.1", "lr=float('abc')"),
            "building the Trainer for",
            "ValueError: could not convert string to float: 'abc'",
        ),
        (("nn.Linear(8, 2)", "nn.Linear(9, 2)"), "training", "RuntimeError: mat1 and mat2 shapes"),
    ],
)
def test_errors_in_the_recipes_code_after_recipe_returned_are_the_users(
    tmp_path, change, doing, error
):
    # QA3 F14: the optimizer factory / the model's forward failed with a traceback through ours
    recipe = tmp_path / "user_recipe.py"
    recipe.write_text(RECIPE.replace(*change))
    result = run_train(recipe, "--quiet")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[-1].startswith(f"torchdoctor: error: {error}")
    assert lines[-1].endswith(f"(while {doing} {recipe})")
    assert "torchdoctor/" not in result.stderr.replace(str(recipe), "")  # none of our frames
