"""`torchdoctor train`: a real run on a user recipe file, settings precedence, one-line errors."""

import json
import subprocess
import sys
import textwrap

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
        capture_output=True, text=True, timeout=120, cwd=cwd,
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
    result = run_train(recipe_file, "--config", config, "--epochs", "1", "-o", "n=40",
                       "--json", out)
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
