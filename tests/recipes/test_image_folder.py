"""Our ImageFolder reads what torchvision's would: sorted class folders, RGB, resized, [0, 1]."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from torchdoctor.data.image_folder import ImageFolder, load_arrays


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "zebra").mkdir()
    (tmp_path / "apple").mkdir()
    Image.new("RGB", (10, 20), (255, 0, 0)).save(tmp_path / "zebra" / "a.png")
    Image.new("L", (64, 64), 128).save(tmp_path / "apple" / "b.png")  # greyscale
    Image.new("RGBA", (64, 64), (0, 0, 255, 10)).save(tmp_path / "apple" / "c.png")
    (tmp_path / "apple" / "notes.txt").write_text("not an image")
    return tmp_path


def test_classes_labels_and_tensors(folder):
    data = ImageFolder(folder, size=64)
    assert data.classes == ["apple", "zebra"]
    assert len(data) == 3  # the .txt file is skipped
    assert data.targets == [0, 0, 1]
    image, label = data[2]
    assert label == 1
    assert image.shape == (3, 64, 64) and image.dtype == torch.float32
    # a red 10x20 image resized to 64x64 is still pure red, scaled to [0, 1]
    assert torch.allclose(image[0], torch.ones(64, 64)) and image[1:].abs().max() == 0
    grey, _ = data[0]
    assert torch.allclose(grey, torch.full((3, 64, 64), 128 / 255))
    blue, _ = data[1]  # RGBA -> RGB drops alpha
    assert torch.allclose(blue[2], torch.ones(64, 64))


def test_load_arrays_is_hwc_uint8(folder):
    images, labels = load_arrays(ImageFolder(folder, size=(16, 16)))
    assert images.shape == (3, 16, 16, 3) and images.dtype == np.uint8
    assert labels.tolist() == [0, 0, 1]


def test_missing_folder(tmp_path):
    with pytest.raises(FileNotFoundError):
        ImageFolder(tmp_path / "nope")
    with pytest.raises(FileNotFoundError):
        ImageFolder(tmp_path)  # no class folders
