"""On a GPU machine, CUDA initialised in the process (by an earlier test, a notebook cell) says
nothing about the program being diagnosed: a CPU program's memory is the process's and its
phases get no CUDA events; a CUDA program's memory is read from the allocator. The CPU halves
run without a GPU under a stand-in (tests/diagnose/test_other_machines.py); here on a real one."""

import torch
from torch import nn

import torchdoctor


def _train(device: str, steps: int = 10) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 1)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(steps):
        loss = model(torch.randn(512, 256, device=device)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def test_memory_and_phase_events_follow_the_programs_device_not_cudas_state():
    torch.zeros(1, device="cuda")  # CUDA initialised before the CPU program is watched
    assert torch.cuda.is_initialized()
    with torchdoctor.watch(steps=4, warmup=2, whatif=False) as on_cpu:
        _train("cpu")
    memory = on_cpu.report.run.memory
    assert (memory.phase_source, memory.step_source) == ("process_rss", "process_rss")
    assert not any(s.device_phases for s in on_cpu.report.run.steps)
    with torchdoctor.watch(steps=4, warmup=2, whatif=False) as on_cuda:
        _train("cuda")
    memory = on_cuda.report.run.memory
    assert (memory.phase_source, memory.step_source) == ("cuda_allocator", "cuda_allocated")
    assert any(s.device_phases for s in on_cuda.report.run.steps)
