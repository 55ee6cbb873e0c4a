"""The loader randomness probe (trials/rng_probe.py) on real DataLoaders with worker processes."""

import os

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
