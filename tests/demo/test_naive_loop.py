"""The naive script is seed 001's loop and runs unmodified as `python -m`."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import torch

from torchdoctor.data.shapes import shapes_dataset
from torchdoctor.demo.naive_loop import Dataset


def test_dataset_converts_each_item_like_the_seed():
    images = np.arange(2 * 4 * 4 * 3, dtype=np.uint8).reshape(2, 4, 4, 3)
    data = Dataset(images, np.array([1, 0]), ("a", "b"))
    image, label = data[0]
    assert image.shape == (3, 4, 4) and image.dtype == torch.float32
    assert torch.equal(image, torch.from_numpy(images[0] / 255.0).permute(2, 0, 1).float())
    assert label.dtype == torch.int64 and label.item() == 1


def test_script_trains_on_an_image_folder(tmp_path):
    root = shapes_dataset(n_train=8, n_val=2, image_size=32, cache_dir=tmp_path)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "torchdoctor.demo.naive_loop",
            "--epochs",
            "2",
            "--data",
            str(root),
            "--device",
            "cpu",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split()[:2] for line in lines] == [["Epoch", "1/2"], ["Epoch", "2/2"]]
    assert "test_acc" in lines[-1]


def test_script_rejects_unknown_recipe():
    result = subprocess.run(
        [sys.executable, "-m", "torchdoctor.demo.naive_loop", "--recipe", "mnist"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and "invalid choice" in result.stderr
