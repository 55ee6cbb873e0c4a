"""Measuring one demo row: wall time (device work included) and peak memory.

Peak memory is what the device can report: on CUDA the peak bytes held by tensors (reset per
row); on CPU the peak resident set size of this process, sampled every few milliseconds
(DataLoader worker processes are not included).
"""

from __future__ import annotations

import os
import threading
import time

import torch

SAMPLE_EVERY_S = 0.005


def _rss_bytes() -> int | None:
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def memory_kind(device: torch.device) -> str:
    return "cuda_allocated" if device.type == "cuda" else "process_rss"


class RowMeter:
    """`with RowMeter(device) as meter: ...` then meter.wall_s and meter.peak_memory_bytes."""

    def __init__(self, device: torch.device):
        self.device = device
        self.wall_s = 0.0
        self.peak_memory_bytes: int | None = None
        self._stop = threading.Event()
        self._sampler: threading.Thread | None = None

    def __enter__(self) -> RowMeter:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
        elif _rss_bytes() is not None:
            self.peak_memory_bytes = _rss_bytes()
            self._sampler = threading.Thread(target=self._sample, daemon=True)
            self._sampler.start()
        self._started = time.perf_counter()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(SAMPLE_EVERY_S):
            self.peak_memory_bytes = max(self.peak_memory_bytes or 0, _rss_bytes() or 0)

    def __exit__(self, *exc) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)  # the device's queued work belongs to this row
        self.wall_s = time.perf_counter() - self._started
        if self.device.type == "cuda":
            self.peak_memory_bytes = int(torch.cuda.max_memory_allocated(self.device))
        elif self._sampler is not None:
            self._stop.set()
            self._sampler.join()
            self.peak_memory_bytes = max(self.peak_memory_bytes or 0, _rss_bytes() or 0)
