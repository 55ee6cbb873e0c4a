"""The CUDA phase probe on a machine with a GPU where the program runs on the CPU: no CUDA event
(a CUDA context: hundreds of MiB of GPU memory, seconds, and calls at every phase) may come from
us. Round 13's first GPU run found it: the CPU suite on an H100 counted 289 calls of our code per
step against a budget of 108, and the memory probe then read the CUDA allocator of a CPU program.
"""

import torch
from torch import nn

import torchdoctor
from torchdoctor.diagnose.probes import cuda_timing


class _CountedEvent:
    made = 0

    def __init__(self, *args, **kwargs) -> None:
        _CountedEvent.made += 1

    def record(self, *args) -> None:
        pass


def test_a_cpu_program_on_a_machine_with_cuda_gets_no_cuda_event(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # a GPU machine...
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)  # ...the program not on it
    monkeypatch.setattr(cuda_timing.torch.cuda, "Event", _CountedEvent)
    _CountedEvent.made = 0
    torch.manual_seed(0)
    model = nn.Linear(8, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 8), torch.randint(0, 2, (16,))
    with torchdoctor.watch(steps=5, warmup=2, whatif=False) as watch:
        for _ in range(8):
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    assert len(watch.report.run.steps) == 5  # the steps were measured...
    assert _CountedEvent.made == 0  # ...without a CUDA event
