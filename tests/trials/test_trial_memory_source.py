"""A trial's peak memory follows the program's device, not CUDA's state in the trial process."""

from __future__ import annotations

import json

import torch

from torchdoctor.trials import worker

CPU_PROGRAM = """
import torch
from torch import nn

model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(6):
    loss = model(torch.randn(128, 64)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_a_cpu_programs_trial_peak_is_the_processs_though_cuda_is_initialised(
    tmp_path, monkeypatch
):
    """On a GPU machine, CUDA initialised in the trial process (by a library, by our own hooks)
    made a CPU program's peak be read from the CUDA allocator: ~0 bytes, and a fix's memory
    change read against it."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *args, **kwargs: None)
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda *args, **kwargs: 0)
    script = tmp_path / "train.py"
    script.write_text(CPU_PROGRAM)
    out = tmp_path / "result.json"
    options = worker.parse_args(["--out", str(out), "--steps", "3", str(script)])
    result = worker.run_trial(options)
    assert result["status"] in ("completed", "stopped"), result
    assert result["memory_source"] == "process_rss"
    assert result["peak_memory_bytes"] > 10 * 2**20  # the process's (torch alone is larger)
    json.dumps(result)  # the worker writes it as JSON
