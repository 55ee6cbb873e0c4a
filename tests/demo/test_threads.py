"""The demo's intra-op thread policy: one thread on CPU unless the user says otherwise."""

from __future__ import annotations

import pytest
import torch

from torchdoctor.demo.run import demo_threads
from torchdoctor.errors import UsageError


def test_cpu_default_is_one_thread_unless_omp_num_threads_is_set(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert demo_threads(None, torch.device("cpu")) == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    assert demo_threads(None, torch.device("cpu")) is None  # PyTorch reads it itself


def test_explicit_threads_win_and_gpu_keeps_the_default(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert demo_threads(3, torch.device("cpu")) == 3
    assert demo_threads(None, torch.device("cuda")) is None
    with pytest.raises(UsageError, match="--threads 0"):
        demo_threads(0, torch.device("cpu"))
