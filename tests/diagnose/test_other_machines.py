"""What the product got wrong on a machine unlike ours (round 13's CPU suite on a 16-core H100
machine, Python 3.12, torch 2.11), each reproduced here without that machine."""

from __future__ import annotations

import torch
from test_cuda_phase_probe import _CountedEvent  # stands for torch.cuda.Event, counts them

from torchdoctor.diagnose.probes import cuda_timing, memory_reading
from torchdoctor.diagnose.probes.retention import _graph_nodes


def test_a_graph_is_counted_node_by_node_whatever_addresses_its_python_objects_take():
    # `next_functions` makes a Python object per node, freed once walked past: counted by id(),
    # the next node took the freed one's address and was not counted (torch 2.11 on Python 3.12:
    # this chain counted 3, and `total = total + loss` keeping every step's graph was not found)
    x = torch.ones(3, requires_grad=True)
    chain = x
    for _ in range(50):
        chain = chain * 1.5
    assert _graph_nodes(chain.grad_fn) == 50 + 1  # the multiplications and x's AccumulateGrad
    doubled = x * 2
    total = doubled + doubled  # one node reached by two edges counts once
    for _ in range(20):
        total = total + doubled
    assert _graph_nodes(total.grad_fn) == 21 + 1 + 1


def test_a_cpu_program_is_read_as_one_though_cuda_is_initialised(diagnose_here, monkeypatch):
    """On a machine with a GPU, CUDA initialised in the process by other code (an earlier test, a
    notebook cell, a library) made a CPU program's memory be read from the CUDA allocator (0 bytes
    at every phase: no memory growth could ever be seen), and CUDA events be recorded at every
    phase of its measured steps."""
    monkeypatch.setattr(memory_reading, "cuda_in_use", lambda: True)
    monkeypatch.setattr(cuda_timing, "cuda_in_use", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "Event", _CountedEvent)
    for counter in ("memory_allocated", "memory_reserved", "max_memory_allocated"):
        monkeypatch.setattr(torch.cuda, counter, lambda *args, **kwargs: 0)
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", lambda *args, **kwargs: None)
    _CountedEvent.made = 0
    report = diagnose_here(
        """
        model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for step in range(10):
            loss = model(torch.randn(128, 64)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        steps=4,
        warmup=2,
        whatif=False,
    )
    memory = report.run.memory
    assert (memory.phase_source, memory.step_source) == ("process_rss", "process_rss")
    assert all(p.allocated_bytes for p in memory.phases), memory.phases
    assert _CountedEvent.made == 0


def _loader_of(batches: int):
    from torch.utils.data import DataLoader, TensorDataset

    return DataLoader(TensorDataset(torch.zeros(batches * 4, 2)), batch_size=4)


def test_the_workers_timed_are_spread_over_those_the_dataset_can_feed(monkeypatch):
    """16 cores and a 12-batch dataset: 1, 4 and 8 workers spread first, then those whose head
    start (2 batches a worker) leaves 4 batches to time kept 1 alone; 1, 2 and 3 all fit."""
    import os

    from torchdoctor.diagnose.whatif.data import _counts

    def cores(count: int) -> None:
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(count)), raising=False)

    cores(16)
    assert _counts(_loader_of(12)) == [1, 2, 3]
    assert _counts(_loader_of(40)) == [1, 4, 8]  # at most 8, as `--try workers` starts
    cores(2)
    assert _counts(_loader_of(12)) == [1, 2]
