"""The memory probe's parts on real torch: saved tensors counted by module (parameters left out,
views counted once, the largest micro-batch kept), and an allocation failure inside the counted
step explained with what had been saved up to it."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import torchdoctor
from torchdoctor.diagnose.probes.activations import ActivationCounter
from torchdoctor.diagnose.probes.memory import MemoryTimelineProbe


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


def _memory_listeners(watched) -> list:
    return [
        listener
        for listener in watched.session.tracker.phase_listeners
        if getattr(listener, "__func__", None) is MemoryTimelineProbe._phase_listener
    ]


@pytest.mark.parametrize(("warmup", "micro_batches"), [(3, 2), (2, 1)])
def test_the_sampled_steps_memory_reads_stop_after_it_when_step_numbering_restarts(
    warmup, micro_batches
):
    """watch() on an optimizer made before it closes steps at backward() until the first
    optimizer.step(), then numbers them from 0 again: with two micro-batches per update (the
    default warmup) or a warmup of 2, the step before the sampled one closed twice and the
    memory read at every phase transition stayed on for the whole run."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(16, 8), torch.randint(0, 2, (16,))
    with torchdoctor.watch(warmup=warmup, whatif=False) as watched:
        for _ in range(6):
            for _ in range(micro_batches):  # accumulated per update
                (nn.functional.cross_entropy(model(x), y) / micro_batches).backward()
            optimizer.step()
            optimizer.zero_grad()
        assert watched.session.tracker.index == 6
        assert _memory_listeners(watched) == []
