"""The memory probe's parts on real torch: saved tensors counted by module (parameters left out,
views counted once, the largest micro-batch kept), and an allocation failure inside the counted
step explained with what had been saved up to it."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import torchdoctor
from torchdoctor.diagnose.probes.activations import ActivationCounter


def test_saved_tensors_are_booked_to_modules_once_per_storage_without_parameters():
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    counter = ActivationCounter()
    counter.start()
    try:
        x = torch.randn(32, 8)
        model(x).sum().backward()  # Linear saves its input, ReLU its output (the next input)
        counter.graph_released()
        small = model(x[:8]).sum()  # a smaller micro-batch: the larger one is kept
        small.backward()
    finally:
        counter.stop()
    by_name = {m.name: m for m in counter.by_module()}
    assert by_name["0"].bytes == 32 * 8 * 4 and by_name["0"].input_bytes == 32 * 8 * 4
    assert by_name["1"].bytes == 32 * 16 * 4  # ReLU's output, saved again by Linear 2: once
    assert "2" not in by_name  # its only saved tensor is ReLU's output (and its weight)
    assert by_name[""].bytes == counter.total_bytes() == 32 * 8 * 4 + 32 * 16 * 4
    assert by_name[""].depth == 0 and by_name["1"].depth == 1


class Exploding(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(16, 64), nn.Tanh())
        self.mixer = nn.Linear(64, 64)

    def forward(self, x):
        h = self.mixer(self.encoder(x))
        return h @ torch.empty(64, 1 << 40)  # 256 TiB: the allocator refuses


def test_an_allocation_failure_in_the_counted_step_is_explained_with_its_activations():
    model = Exploding()
    with pytest.raises(RuntimeError, match="can't allocate memory"):
        with torchdoctor.watch(warmup=2) as watched:
            model(torch.randn(32, 16)).sum().backward()
    report = watched.report
    oom = report.run.memory.out_of_memory
    assert oom is not None and oom.step == 0 and oom.module == "Exploding"
    assert oom.requested_bytes == 64 * (1 << 40) * 4
    # saved before the failure: encoder input + tanh output + (mixer input = tanh output)
    assert oom.activations_bytes == 32 * 16 * 4 + 32 * 64 * 4
    d506 = next(f for f in report.findings if f.id == "D506")
    assert d506.severity == "error" and "up to the failure" in " ".join(d506.evidence)
