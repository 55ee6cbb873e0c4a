"""MFU of a conv and a transformer training step on CUDA: FLOPs per step counted by
torch.utils.flop_counter (forward + backward; the optimizer's elementwise work not counted), step
time from CUDA events over `--steps` steps after warm-up, against the bf16 matmul peak measured
here (bench/gpu_peak.py) and against torchdoctor's peak table.

    python3 bench/gpu_mfu.py [--steps 50] [--json FILE]
"""

from __future__ import annotations

import argparse
import json

import torch
from torch.utils.flop_counter import FlopCounterMode

from gpu_peak import measure
from gpu_workloads import workload
from torchdoctor.diagnose.probes.peak_flops import gpu_peak


def step_seconds(step, steps: int) -> float:
    for _ in range(5):
        step()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(steps):
        step()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3 / steps


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    name = torch.cuda.get_device_name()
    measured_peak = measure(torch.bfloat16, False, 8192, 20)
    table_peak, source = gpu_peak(name, "bf16")
    print(
        f"{name}: bf16 peak measured {measured_peak / 1e12:.0f} TFLOP/s, {source} "
        f"{(table_peak or 0) / 1e12:.0f} TFLOP/s"
    )
    print(
        f"{'workload':<12}{'GFLOP/step':>11}{'step ms':>9}{'TFLOP/s':>9}"
        f"{'MFU measured':>14}{'MFU table':>11}  description"
    )
    rows = {}
    for model in ("conv", "transformer"):
        step, description = workload(model)
        step()
        with FlopCounterMode(display=False) as counter:
            step()
        flops = counter.get_total_flops()
        seconds = step_seconds(step, args.steps)
        achieved = flops / seconds
        table_mfu = achieved / table_peak if table_peak else float("nan")
        print(
            f"{model:<12}{flops / 1e9:>11.1f}{seconds * 1e3:>9.2f}{achieved / 1e12:>9.1f}"
            f"{achieved / measured_peak:>14.1%}{table_mfu:>11.1%}  {description}"
        )
        rows[model] = {"flops": flops, "step_s": seconds, "description": description}
        del step
        torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(
                {
                    "device": name,
                    "measured_peak": measured_peak,
                    "table_peak": table_peak,
                    "rows": rows,
                },
                handle,
                indent=1,
            )


if __name__ == "__main__":
    main()
