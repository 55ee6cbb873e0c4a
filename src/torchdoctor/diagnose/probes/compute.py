"""Compute efficiency: achieved FLOP/s against the device peak, and time per dispatched op."""

from __future__ import annotations

import statistics

import torch

from torchdoctor.diagnose.probes.base import Probe
from torchdoctor.diagnose.probes.peak_flops import cpu_peak, dispatch_overhead, gpu_peak

_COMPUTE_PHASES = ("forward", "backward", "optimizer")


def _precision(run) -> str:
    dtype = run.precision.autocast_dtype
    if dtype in ("bfloat16", "float16") and run.precision.autocast_forwards:
        return "bf16" if dtype == "bfloat16" else "fp16"
    if run.environment.tf32_matmul:
        return "tf32"
    return "fp32"


class ComputeProbe(Probe):
    def contribute(self, run, measured) -> None:
        compute = run.compute
        env = run.environment
        if env.device_type == "cuda" and torch.cuda.is_available():
            peak = gpu_peak(env.device_name, _precision(run))
            compute.peak_flops_per_s, compute.peak_source = peak
            device = "cuda"
        else:
            compute.peak_flops_per_s, compute.peak_source = cpu_peak()
            device = "cpu"
        compute.dispatch_overhead_s = dispatch_overhead(device)
        if not measured:
            return
        shares = [r.cpu_share for r in measured if r.cpu_share is not None]
        compute.cpu_share = statistics.median(shares) if shares else None
        step_s = statistics.median(r.wall for r in measured)
        if compute.flops_per_step and step_s > 0:
            compute.achieved_flops_per_s = compute.flops_per_step / step_s
            peak = compute.peak_flops_per_s
            if peak and device == "cpu" and compute.achieved_flops_per_s > peak:
                # the matmul ran on a busier machine than the program did: the run itself
                # shows the peak is at least this high (utilization is never over 100%)
                compute.peak_flops_per_s = compute.achieved_flops_per_s
                compute.peak_source += "; raised to this run's achieved FLOP/s"
            if compute.peak_flops_per_s:
                compute.utilization = compute.achieved_flops_per_s / compute.peak_flops_per_s
        if compute.ops_per_step:
            busy = statistics.median(
                sum(r.phases.get(p, 0.0) for p in _COMPUTE_PHASES) for r in measured
            )
            compute.mean_op_s = busy / compute.ops_per_step
