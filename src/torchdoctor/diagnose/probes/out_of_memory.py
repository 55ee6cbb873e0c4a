"""Out of memory: recognise the error and read what it says (the failed request; on CUDA, what
the caching allocator held), and find where in the user's program it happened."""

from __future__ import annotations

import re
import traceback

import torch

from torchdoctor.diagnose.callsite import is_library_file
from torchdoctor.diagnose.observations import OutOfMemoryObservation
from torchdoctor.diagnose.source_lines import short_path

CPU_OOM_MARKERS = ("can't allocate memory", "DefaultCPUAllocator", "out of memory")
_UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
_SIZE = r"([0-9.]+) ?(B|KiB|MiB|GiB|TiB)"
# which of our wrappers was on the stack: the phase the program died in
_PHASE_OF_PROBE = {"forward.py": "forward", "backward.py": "backward", "optimizer.py": "optimizer"}


def is_oom(exc: BaseException) -> bool:
    if isinstance(exc, (torch.cuda.OutOfMemoryError, MemoryError)):
        return True
    return isinstance(exc, RuntimeError) and any(m in str(exc) for m in CPU_OOM_MARKERS)


def _size(text: str) -> int | None:
    match = re.fullmatch(_SIZE, text.strip())
    return int(float(match.group(1)) * _UNITS[match.group(2)]) if match else None


def _find(pattern: str, message: str) -> int | None:
    match = re.search(pattern, message)
    if not match:
        return None
    return _size(match.group(1) + " " + match.group(2))


def parse_message(message: str, observation: OutOfMemoryObservation) -> None:
    """Fill what the allocator's message says: CUDA's 'Tried to allocate 2.00 GiB ... of which
    ... 1.5 GiB is reserved by PyTorch but unallocated', or the CPU allocator's 'you tried to
    allocate 123 bytes'."""
    cpu = re.search(r"tried to allocate (\d+) bytes", message)
    if cpu:
        observation.requested_bytes = int(cpu.group(1))
        return
    observation.requested_bytes = _find(r"[Tt]ried to allocate " + _SIZE, message)
    observation.capacity_bytes = _find(r"total capacity of " + _SIZE, message)
    observation.allocated_bytes = _find(_SIZE + r" is allocated by PyTorch", message)
    observation.reserved_free_bytes = _find(
        _SIZE + r" is reserved by PyTorch but unallocated", message
    )


def failing_module(exc: BaseException):
    """The innermost nn.Module whose forward was running (a frame's `self`), or None."""
    found = None
    for frame, _ in traceback.walk_tb(exc.__traceback__):
        candidate = frame.f_locals.get("self")
        if isinstance(candidate, torch.nn.Module):
            found = candidate
    return found


def where(exc: BaseException) -> tuple[str | None, str | None]:
    """(phase, the innermost user line) from the traceback."""
    phase, location = None, None
    for frame, line in traceback.walk_tb(exc.__traceback__):
        filename = frame.f_code.co_filename
        if "diagnose" in filename:
            for name, probe_phase in _PHASE_OF_PROBE.items():
                if filename.endswith("probes/" + name):
                    phase = probe_phase
        if not is_library_file(filename):
            location = f"{short_path(filename)}:{line}"
    return phase, location


def explain(exc: BaseException, device: str) -> OutOfMemoryObservation:
    message = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    observation = OutOfMemoryObservation(message=message.splitlines()[0][:300], device=device)
    parse_message(message, observation)
    observation.phase, observation.location = where(exc)
    return observation
