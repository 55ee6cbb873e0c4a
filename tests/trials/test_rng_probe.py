"""The loader randomness probe (trials/rng_probe.py) on real DataLoaders with worker processes."""

import os
import random

import numpy as np
import pytest
import torch

from torchdoctor.intercept.hooks import Hooks
from torchdoctor.trials.rng_probe import LoaderRandomnessProbe


class Jittered(torch.utils.data.Dataset):
    def __init__(self, draws: bool):
        self.draws = draws

    def __len__(self):
        return 8

    def __getitem__(self, index):
        return torch.randn(2) if self.draws else torch.full((2,), float(index))


@pytest.mark.parametrize("draws", [True, False])
def test_the_randomness_probe_sees_draws_made_in_loader_workers(draws):
    """A loader that already has workers (the `persistent_workers` trial's baseline) draws its
    augmentation in worker processes: the probe must see it there too, or a fix that only moves
    those draws is judged "changed"."""
    probe = LoaderRandomnessProbe()
    hooks = Hooks(cpu_count=2)
    probe.attach(hooks)
    hooks.install()
    try:
        loader = torch.utils.data.DataLoader(Jittered(draws), batch_size=4, num_workers=1)
        assert len(list(loader)) == 2
    finally:
        hooks.uninstall()
    assert probe.drew is draws
    probe.close()
    assert probe.drew is draws and not os.path.exists(probe._marker)


class Flip:
    """A transform holding its own generator (a dataset attribute's attribute)."""

    def __init__(self):
        self.draw = random.Random(0)

    def __call__(self, x):
        return x.flip(0) if self.draw.random() < 0.5 else x


class OwnGenerators(torch.utils.data.Dataset):
    def __init__(self, kind: str):
        self.kind = kind
        self.rng = np.random.default_rng(1)
        self.transform = Flip()
        self.gen = torch.Generator().manual_seed(2)

    def __len__(self):
        return 8

    def __getitem__(self, index):
        x = torch.full((2,), float(index))
        if self.kind == "numpy":
            return x + float(self.rng.integers(0, 9))
        if self.kind == "transform":
            return self.transform(x)
        if self.kind == "torch":
            return x + torch.rand(1, generator=self.gen)
        return x


@pytest.mark.parametrize(
    ("kind", "workers"), [("numpy", 1), ("transform", 0), ("torch", 0), ("none", 1)]
)
def test_the_randomness_probe_sees_draws_from_the_datasets_own_generators(kind, workers):
    """d101's dataset draws its crops from `self.rng = np.random.default_rng(1)`: no global
    generator moves, yet each worker draws from its own copy; `--try workers` said "changes
    results" for it. A dataset's own generators, and those of what it holds, count as draws."""
    probe = LoaderRandomnessProbe()
    hooks = Hooks(cpu_count=2)
    probe.attach(hooks)
    hooks.install()
    try:
        loader = torch.utils.data.DataLoader(OwnGenerators(kind), batch_size=4, num_workers=workers)
        assert len(list(loader)) == 2
    finally:
        hooks.uninstall()
    assert probe.drew is (kind != "none")
    probe.close()
