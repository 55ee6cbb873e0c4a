"""A test-only shim that makes this machine look like another to every Python process started
with this folder on PYTHONPATH (the test process and its children alike), never used by the
product:

- TORCHDOCTOR_SHIM_CORES=N: the process may use N cores (os.sched_getaffinity, os.cpu_count),
  as on a 16-core machine; the work still runs on the real cores.
- TORCHDOCTOR_SHIM_CUDA=1: torch says a CUDA device is available (is_available, device_count)
  without initialising it, as on a GPU machine whose program runs on the CPU. Any CUDA call
  beyond these two still fails here: what a CPU program's diagnosis touches of CUDA shows up.

    TORCHDOCTOR_SHIM_CORES=16 TORCHDOCTOR_SHIM_CUDA=1 PYTHONPATH=tests/machine_shim \\
        .venv/bin/python -m pytest -n 0 tests/diagnose/test_other_machines.py
"""

from __future__ import annotations

import os

_cores = int(os.environ.get("TORCHDOCTOR_SHIM_CORES", "0"))
if _cores > 0:
    os.sched_getaffinity = lambda pid: set(range(_cores))  # type: ignore[assignment]
    os.cpu_count = lambda: _cores

if os.environ.get("TORCHDOCTOR_SHIM_CUDA") == "1":
    import torch

    torch.cuda.is_available = lambda: True
    torch.cuda.device_count = lambda: 1
