"""The shapes generator: deterministic, all-or-nothing, class folders, skipped when present."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from PIL import Image

from torchdoctor.data import shapes as shapes_module
from torchdoctor.data.cache import MANIFEST, cache_root
from torchdoctor.data.shapes import CLASSES, shapes_dataset
from torchdoctor.errors import TorchdoctorError


def _digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.png")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def test_layout_counts_and_sizes(tmp_path):
    root = shapes_dataset(n_train=3, n_val=2, image_size=40, cache_dir=tmp_path)
    assert root.parent == tmp_path / "shapes-v1"
    assert (root / MANIFEST).is_file()
    for split, count in (("train", 3), ("val", 2)):
        assert sorted(p.name for p in (root / split).iterdir()) == sorted(CLASSES)
        for name in CLASSES:
            files = sorted((root / split / name).glob("*.png"))
            assert len(files) == count
            with Image.open(files[0]) as image:
                assert image.size == (40, 40) and image.mode == "RGB"


def test_same_seed_same_bytes_other_seed_differs(tmp_path):
    first = shapes_dataset(n_train=4, n_val=1, image_size=32, seed=7, cache_dir=tmp_path / "a")
    again = shapes_dataset(n_train=4, n_val=1, image_size=32, seed=7, cache_dir=tmp_path / "b")
    other = shapes_dataset(n_train=4, n_val=1, image_size=32, seed=8, cache_dir=tmp_path / "a")
    assert _digest(first) == _digest(again)
    assert _digest(first) != _digest(other)
    assert first != other  # different parameters live in different directories


def test_interrupted_generation_leaves_nothing_then_succeeds(tmp_path, monkeypatch):
    real_draw = shapes_module.draw_shape
    calls = {"n": 0}

    def failing_draw(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 5:
            raise KeyboardInterrupt  # like Ctrl-C half way through
        return real_draw(*args, **kwargs)

    monkeypatch.setattr(shapes_module, "draw_shape", failing_draw)
    with pytest.raises(KeyboardInterrupt):
        shapes_dataset(n_train=3, n_val=1, image_size=32, cache_dir=tmp_path)
    parent = tmp_path / "shapes-v1"
    assert list(parent.iterdir()) == []  # no half data set, no temporary directory left

    monkeypatch.setattr(shapes_module, "draw_shape", real_draw)
    root = shapes_dataset(n_train=3, n_val=1, image_size=32, cache_dir=tmp_path)
    assert len(list(root.rglob("*.png"))) == 4 * len(CLASSES)


def test_present_data_set_is_not_regenerated(tmp_path, monkeypatch):
    root = shapes_dataset(n_train=2, n_val=1, image_size=32, cache_dir=tmp_path)

    def must_not_run(*args, **kwargs):
        raise AssertionError("generated again")

    monkeypatch.setattr(shapes_module, "_generate", must_not_run)
    assert shapes_dataset(n_train=2, n_val=1, image_size=32, cache_dir=tmp_path) == root


def test_directory_without_manifest_is_replaced(tmp_path):
    root = shapes_dataset(n_train=2, n_val=1, image_size=32, cache_dir=tmp_path)
    (root / MANIFEST).unlink()  # e.g. left by an older, non-atomic writer
    (root / "train" / "circle" / "00000.png").write_bytes(b"truncated")
    again = shapes_dataset(n_train=2, n_val=1, image_size=32, cache_dir=tmp_path)
    with Image.open(again / "train" / "circle" / "00000.png") as image:
        image.load()


def test_cache_root_precedence(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHDOCTOR_CACHE", str(tmp_path / "env"))
    assert cache_root() == tmp_path / "env"
    assert cache_root(tmp_path / "opt") == tmp_path / "opt"
    monkeypatch.delenv("TORCHDOCTOR_CACHE")
    assert cache_root() == Path.home() / ".cache" / "torchdoctor"


def test_unwritable_cache_is_one_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache directory should be")
    with pytest.raises(TorchdoctorError, match="cannot write generated data under"):
        shapes_dataset(n_train=1, n_val=1, image_size=32, cache_dir=blocker)


def test_bad_sizes_are_rejected(tmp_path):
    with pytest.raises(ValueError):
        shapes_dataset(n_train=0, cache_dir=tmp_path)
