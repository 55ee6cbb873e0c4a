"""A CIFAR-10-shaped data set generated in memory: 32x32x3 uint8 images, 10 classes.

Seed 001 trains ResNet-18 on CIFAR-10; with no network we generate a stand-in with the same
shapes and dtypes that a network can actually learn: each class is a prototype (an oriented
stripe texture of its own frequency blending two class colours), and every sample is its class
prototype circularly shifted by up to `max_shift` pixels, dimmed or brightened, plus pixel noise.
"""

from __future__ import annotations

import numpy as np

N_CLASSES = 10
SIDE = 32
CLASSES = ("plane", "car", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
_PROTOTYPE_SEED = 1234  # fixed: train and val sets of any seed share the same classes
NOISE = 90.0  # pixel noise std: ResNet-18 still reaches ~95% in 3 small epochs, not in one step


def prototypes() -> np.ndarray:
    """(10, 32, 32, 3) float32 in [0, 255]: one texture per class."""
    rng = np.random.default_rng(_PROTOTYPE_SEED)
    y, x = np.mgrid[0:SIDE, 0:SIDE].astype(np.float32) / SIDE
    protos = np.empty((N_CLASSES, SIDE, SIDE, 3), dtype=np.float32)
    for k in range(N_CLASSES):
        angle = np.pi * k / N_CLASSES
        freq = (2, 3, 4)[k % 3]  # whole periods per image, so circular shifts stay seamless
        wave = np.sin(2 * np.pi * freq * (x * np.cos(angle) + y * np.sin(angle)).round(6))
        blend = (1 + wave)[..., None] / 2
        first, second = rng.uniform(0, 255, size=(2, 3)).astype(np.float32)
        protos[k] = blend * first + (1 - blend) * second
    return protos


def cifar_like(
    n: int, seed: int = 0, noise: float = NOISE, max_shift: int = 4
) -> tuple[np.ndarray, np.ndarray]:
    """`n` images (N, 32, 32, 3) uint8 and labels (N,) int64, balanced over the 10 classes."""
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n) % N_CLASSES).astype(np.int64)
    dy, dx = rng.integers(-max_shift, max_shift + 1, size=(2, n))
    rows = (np.arange(SIDE)[None, :] - dy[:, None]) % SIDE
    cols = (np.arange(SIDE)[None, :] - dx[:, None]) % SIDE
    images = prototypes()[labels[:, None, None], rows[:, :, None], cols[:, None, :]]
    images *= rng.uniform(0.7, 1.3, size=(n, 1, 1, 1)).astype(np.float32)
    images += rng.normal(0.0, noise, size=images.shape).astype(np.float32)
    return np.clip(images, 0, 255).astype(np.uint8), labels
