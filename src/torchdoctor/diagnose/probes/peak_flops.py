"""Peak FLOP/s of the device: a table of dense tensor-core / FP32 peaks for known GPUs, and on
CPU a float32 matmul measured once per (CPU, threads, torch) and cached in ~/.cache/torchdoctor.

The answer always says where the number came from; an unknown GPU gives (None, "unknown")
instead of a guess.
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

import torch

# name fragment -> {"bf16": TFLOP/s dense, "fp16": ..., "tf32": ..., "fp32": ...} (vendor sheets)
GPU_PEAK_TFLOPS: list[tuple[str, dict[str, float]]] = [
    ("H200", {"bf16": 989, "fp16": 989, "tf32": 494, "fp32": 67}),
    ("H100 PCIe", {"bf16": 756, "fp16": 756, "tf32": 378, "fp32": 51}),
    ("H100 NVL", {"bf16": 835, "fp16": 835, "tf32": 418, "fp32": 60}),
    ("H100", {"bf16": 989, "fp16": 989, "tf32": 494, "fp32": 67}),
    ("A100", {"bf16": 312, "fp16": 312, "tf32": 156, "fp32": 19.5}),
    ("L40S", {"bf16": 362, "fp16": 362, "tf32": 183, "fp32": 91.6}),
    ("L4", {"bf16": 121, "fp16": 121, "tf32": 60, "fp32": 30.3}),
    ("A10G", {"bf16": 70, "fp16": 70, "tf32": 35, "fp32": 31.2}),
    ("A10", {"bf16": 125, "fp16": 125, "tf32": 62.5, "fp32": 31.2}),
    ("RTX A6000", {"bf16": 154.8, "fp16": 154.8, "tf32": 77.4, "fp32": 38.7}),
    ("RTX 4090", {"bf16": 165.2, "fp16": 165.2, "tf32": 82.6, "fp32": 82.6}),
    ("RTX 3090", {"bf16": 71, "fp16": 71, "tf32": 35.6, "fp32": 35.6}),
    ("V100", {"fp16": 125, "fp32": 15.7}),
    ("T4", {"fp16": 65, "fp32": 8.1}),
]


# name fragment -> TFLOP/s that a large matmul (cuBLAS, 8192^3, random data, CUDA events, median
# of 20) really reached on such a GPU: the datasheets' dense peaks are 25-37% above them (round 13,
# docs/benchmarks.md "GPU, round 13"), so MFU against a datasheet understated what the program got
# of what is reachable. The H200 has the H100's tensor cores and clocks: the H100's reading stands.
MEASURED_TFLOPS: dict[str, tuple[dict[str, float], str]] = {
    "H200": ({"bf16": 762, "fp16": 725, "tf32": 384, "fp32": 51}, "an H100 80GB HBM3"),
    "H100": ({"bf16": 762, "fp16": 725, "tf32": 384, "fp32": 51}, "an H100 80GB HBM3"),
}


def gpu_peak(device_name: str, precision: str) -> tuple[float | None, str]:
    """(FLOP/s, source) for a GPU name and "bf16" / "fp16" / "tf32" / "fp32": a matmul rate
    measured on that GPU where there is one, else the datasheet's dense peak."""
    for fragment, peaks in GPU_PEAK_TFLOPS:
        if fragment.lower() in device_name.lower():
            value = peaks.get(precision)
            if value is None:
                return None, f"unknown: no {precision} peak for {fragment} in the table"
            measured, where = MEASURED_TFLOPS.get(fragment, ({}, ""))
            if precision in measured:
                return measured[precision] * 1e12, (
                    f"table: {fragment} ({precision} matmul measured on {where}; "
                    f"datasheet {value:g})"
                )
            return value * 1e12, f"table: {fragment} ({precision} dense, datasheet)"
    return None, "unknown"


def _cache_file() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "torchdoctor" / "cpu_peak.json"


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _measure_cpu_matmul(size: int = 512, repeats: int = 3) -> float:
    a = torch.randn(size, size)
    b = torch.randn(size, size)
    a @ b  # warm up the BLAS
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(2):
            a @ b
        best = min(best, (time.perf_counter() - started) / 2)
    return 2 * size**3 / best


def cpu_peak() -> tuple[float | None, str]:
    """The best float32 matmul FLOP/s seen on this CPU (threads, torch) so far.

    One measurement on a busy machine is only a lower bound of the peak (other processes take
    the cores), so every run measures again (~20 ms) and the cache keeps the maximum: the
    number only goes up towards the real peak, and a bad first measurement does not stick.
    """
    key = f"{_cpu_name()}|threads={torch.get_num_threads()}|torch={torch.__version__}"
    path = _cache_file()
    try:
        cached = json.loads(path.read_text())
    except (OSError, ValueError):
        cached = {}
    try:
        measured = _measure_cpu_matmul()
    except RuntimeError:
        measured = None
    previous = cached.get(key)
    if measured is None or (previous is not None and previous >= measured):
        if previous is None:
            return None, "unknown"
        return previous, f"measured CPU fp32 matmul, best of all runs (cached in {path})"
    cached[key] = measured
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(cached, indent=1))
    except OSError:
        return measured, "measured CPU fp32 matmul (not cached: cache dir not writable)"
    return measured, f"measured CPU fp32 matmul, best of all runs (cached in {path})"


def dispatch_overhead(device: str, calls: int = 300) -> float:
    """Seconds per trivial op on `device` (the eager floor an overhead-bound step is close to).
    On a CPU in the thread's CPU time: the per-op costs it is compared with are CPU time (the
    step's compute scaled by its CPU share), and in wall time a busy machine's preemption was
    in all three blocks (load 28: 44.7 us a trivial op where ops took 2.3 us each, so every op
    read as trivial and a clean loop got D202); on CUDA in wall time, to the device's end."""
    cuda = device.startswith("cuda")
    clock = time.perf_counter if cuda else time.thread_time
    x = torch.zeros(1, device=device)
    best = float("inf")
    for _ in range(3):
        started = clock()
        for _ in range(calls):
            torch.add(x, 1)
        if cuda:
            torch.cuda.synchronize()
        best = min(best, (clock() - started) / calls)
    return best
