"""A small image-folder data set of simple shapes (seed 000's `./shapes/train`), generated locally.

Each image is one bright shape (circle, cross, square, triangle) of random size, position and
colour on a random dark background (so seed 000's plain MLP can learn it in seconds), saved as PNG under `<root>/{train,val}/<class>/NNNNN.png`, the layout
torchvision's ImageFolder (and our `ImageFolder`) reads. Generation is deterministic from the
seed, written atomically, and skipped when the same parameters were generated before.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from torchdoctor.data.cache import build_once, cache_root, params_hash

CLASSES = ("circle", "cross", "square", "triangle")
VERSION = "shapes-v1"


def shapes_dataset(
    n_train: int = 200,
    n_val: int = 50,
    image_size: int = 64,
    seed: int = 0,
    cache_dir: str | os.PathLike | None = None,
) -> Path:
    """Path of the generated data set (generating it first if needed); counts are per class."""
    if n_train < 1 or n_val < 1 or image_size < 16:
        raise ValueError("shapes data set needs n_train >= 1, n_val >= 1 and image_size >= 16")
    params = {"n_train": n_train, "n_val": n_val, "image_size": image_size, "seed": seed}
    final = cache_root(cache_dir) / VERSION / params_hash(params)
    manifest = {"version": VERSION, "classes": list(CLASSES), **params}
    return build_once(final, lambda tmp: _generate(tmp, **params), manifest)


def _generate(root: Path, n_train: int, n_val: int, image_size: int, seed: int) -> None:
    # One generator per split: the val set does not change when n_train does.
    for offset, (split, count) in enumerate((("train", n_train), ("val", n_val))):
        rng = np.random.default_rng([seed, offset])
        for name in CLASSES:
            folder = root / split / name
            folder.mkdir(parents=True)
            for index in range(count):
                draw_shape(name, image_size, rng).save(folder / f"{index:05d}.png")


def draw_shape(name: str, size: int, rng: np.random.Generator) -> Image.Image:
    background, colour = _contrasting_colours(rng)
    image = Image.new("RGB", (size, size), background)
    draw = ImageDraw.Draw(image)
    extent = rng.uniform(0.45, 0.7) * size  # shape's bounding box side
    cx, cy = size / 2 + rng.uniform(-0.08, 0.08, size=2) * size
    half = extent / 2
    box = (cx - half, cy - half, cx + half, cy + half)
    if name == "circle":
        draw.ellipse(box, fill=colour)
    elif name == "square":
        draw.rectangle(box, fill=colour)
    elif name == "triangle":
        draw.polygon(_triangle(cx, cy, half), fill=colour)
    elif name == "cross":
        bar = max(2.0, extent / 3.5)
        draw.rectangle((cx - half, cy - bar / 2, cx + half, cy + bar / 2), fill=colour)
        draw.rectangle((cx - bar / 2, cy - half, cx + bar / 2, cy + half), fill=colour)
    else:
        raise ValueError(f"unknown shape {name!r}; known: {', '.join(CLASSES)}")
    return image


def _triangle(cx: float, cy: float, half: float) -> list[tuple[float, float]]:
    # Equilateral, pointing up, centred on its bounding box.
    height = half * math.sqrt(3)
    top = cy - height / 2
    return [(cx, top), (cx - half, top + height), (cx + half, top + height)]


def _contrasting_colours(rng: np.random.Generator) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A dark background and a bright shape colour, each channel drawn at random."""
    background = rng.integers(0, 90, size=3)
    colour = rng.integers(150, 256, size=3)
    return tuple(int(v) for v in background), tuple(int(v) for v in colour)
