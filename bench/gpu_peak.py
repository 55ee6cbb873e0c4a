"""Measured matmul peaks of the CUDA device next to torchdoctor's peak table.

For bf16, fp16, tf32 and fp32: an N x N x N product on random data (never zeros: they run faster
than real data), timed with CUDA events, median of `--repeats` after warm-ups, rotating among
three input pairs so the inputs are not served from L2. Prints TFLOP/s measured, the table's
entry (diagnose/probes/peak_flops.py) and table / measured.

    python3 bench/gpu_peak.py [--size 8192] [--repeats 20] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics

import torch

from torchdoctor.diagnose.probes.peak_flops import gpu_peak

PRECISIONS = {
    "bf16": (torch.bfloat16, False),
    "fp16": (torch.float16, False),
    "tf32": (torch.float32, True),
    "fp32": (torch.float32, False),
}


def measure(dtype: torch.dtype, tf32: bool, size: int, repeats: int) -> float:
    """Median FLOP/s of one size^3 product."""
    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    try:
        pairs = [
            (
                torch.randn(size, size, device="cuda", dtype=dtype),
                torch.randn(size, size, device="cuda", dtype=dtype),
            )
            for _ in range(3)
        ]
        for a, b in pairs:
            a @ b
        torch.cuda.synchronize()
        times = []
        for index in range(repeats):
            a, b = pairs[index % 3]
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            a @ b
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1e3)
        return 2 * size**3 / statistics.median(times)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=8192)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    name = torch.cuda.get_device_name()
    rows = {}
    print(f"{name}, torch {torch.__version__}, CUDA {torch.version.cuda}")
    print(f"{'precision':<10}{'measured TFLOP/s':>18}{'table TFLOP/s':>15}{'table/measured':>16}")
    for precision, (dtype, tf32) in PRECISIONS.items():
        measured = measure(dtype, tf32, args.size, args.repeats)
        table, source = gpu_peak(name, precision)
        ratio = f"{table / measured:.2f}" if table else "-"
        shown = f"{table / 1e12:.0f}" if table else "-"
        print(f"{precision:<10}{measured / 1e12:>18.0f}{shown:>15}{ratio:>16}")
        rows[precision] = {"measured": measured, "table": table, "source": source}
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"device": name, "torch": torch.__version__, "rows": rows}, handle, indent=1)


if __name__ == "__main__":
    main()
