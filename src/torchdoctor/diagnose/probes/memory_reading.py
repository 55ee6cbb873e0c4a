"""Reading how much memory is in use now, cheaply: the CUDA caching allocator's counters, or the
process's resident memory on CPU (torch has no CPU allocator statistics; /proc/self/statm is one
small read)."""

from __future__ import annotations

import os
from collections.abc import Callable

import torch

try:
    _PAGE = os.sysconf("SC_PAGE_SIZE")
except (ValueError, OSError, AttributeError):
    _PAGE = 4096


class ResidentMemory:
    """The process's resident memory in bytes, or None where /proc is missing. The file stays
    open: re-reading it with pread costs about a microsecond, opening it again some tens."""

    def __init__(self) -> None:
        self.fd: int | None = None
        self.missing = False

    def read(self) -> int | None:
        if self.missing:
            return None
        try:
            if self.fd is None:
                self.fd = os.open("/proc/self/statm", os.O_RDONLY)
            return int(os.pread(self.fd, 128, 0).split()[1]) * _PAGE
        except (OSError, ValueError, IndexError):
            self.missing = True
            return None

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def cuda_in_use() -> bool:
    # asked at every step end: is_initialized() (a flag) first, is_available() is the slow one
    return torch.cuda.is_initialized() and torch.cuda.is_available()


class MemoryReader:
    """`allocated()`: bytes in use now; on CUDA also `reserved()` and a peak per interval.
    `cuda`: the program trains on CUDA (CUDA being initialised in the process is not enough: a
    CPU program on a machine with a GPU, beside code that touched CUDA, keeps its tensors in the
    process's memory, and the allocator's counters read 0 for them)."""

    def __init__(self, cuda: bool = False) -> None:
        self.cuda = cuda and cuda_in_use()
        self.source = "cuda_allocator" if self.cuda else "process_rss"
        self.peak_seen = 0  # CUDA: the largest peak read before a reset (the run's true peak)
        self.resident = ResidentMemory()
        # bytes in use now; bound once (read at every step end)
        self.allocated: Callable[[], int | None] = (
            torch.cuda.memory_allocated if self.cuda else self.resident.read
        )

    def close(self) -> None:
        self.resident.close()

    def reserved(self) -> int | None:
        return torch.cuda.memory_reserved() if self.cuda else None

    def peak_and_reset(self) -> int | None:
        """CUDA: the peak allocated since the last call (then reset); CPU: None."""
        if not self.cuda:
            return None
        peak = torch.cuda.max_memory_allocated()
        self.peak_seen = max(self.peak_seen, peak)
        torch.cuda.reset_peak_memory_stats()
        return peak
