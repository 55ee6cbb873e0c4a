"""diagnose on a real GPU: its CUDA phase times against torch.profiler's kernel total on a
compute-bound step, and the planted CUDA scripts of tests/gpu/scripts: each GPU rule is the top
finding on its script, quiet on the script's `--fixed` control and on the clean loops.

With TD_GPU_LOGS set, each diagnosis's report text and JSON are copied there (the record)."""

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

import torchdoctor

SCRIPTS = Path(__file__).parent / "scripts"
TIMEOUT_S = 60
GPU_RULES = {"D104", "D204", "D205", "D206", "D207", "D208", "D209", "D401", "D402", "D501", "D601"}
PLANTED = {
    "d204_no_autocast": "D204",
    "d206_tf32_off": "D206",
    "d205_cudnn_benchmark_off": "D205",
    "d207_channels_last_missing": "D207",
    "d208_dims_not_multiple_of_8": "D208",
    "d402_pageable_blocking_copies": "D104",  # pin_memory off; its fix adds non_blocking (D402)
    "d601_data_parallel": "D601",
    "d209_clip_scaled_gradients": "D209",
    "d401_item_per_step": "D401",
    "d501_memory_near_capacity": "D501",
}


def alone_only(script: str) -> None:
    """The memory script fills the card: beside other tests on the same GPU they run out."""
    if script.startswith("d501") and os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") != "1":
        pytest.skip("fills the GPU's memory: run without -n (or -n 1)")


def diagnose(script: str, *args: str, tmp_path: Path) -> dict:
    out = tmp_path / f"{script}.json"
    command = [
        sys.executable,
        "-X",
        "faulthandler",
        "-m",
        "torchdoctor",
        "diagnose",
        "--budget",
        "20",
        "--json",
        str(out),
        str(SCRIPTS / f"{script}.py"),
        *args,
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        output, _ = process.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGABRT)  # faulthandler prints every thread's stack
        output, _ = process.communicate()
        output = f"timed out after {TIMEOUT_S} s\n" + output
    logs = os.environ.get("TD_GPU_LOGS")
    name = script + ("_fixed" if args else "")
    if logs:
        Path(logs, f"{name}.txt").write_text(output)
        if out.exists():
            shutil.copy(out, Path(logs, f"{name}.json"))
    assert process.returncode == 0, output[-5000:]
    return json.loads(out.read_text())


# Missed as the top finding on the H100 of round 13 (docs/benchmarks.md, "GPU, round 13"): kept
# as targets, marked so that a GPU run tells a fix (XPASS) from a regression.
KNOWN_MISSES = {
    "d204_no_autocast": "D206 (TF32 measured 0.32x forward+backward) outranks D204 (estimate: the "
    "autocast what-if did not fit its budget)",
    "d205_cudnn_benchmark_off": "a small conv net on an H100 is overhead-bound: D202 first, "
    "D205 measured no faster or absent",
    "d207_channels_last_missing": "D202 (overhead-bound, estimate 18%) outranks D207 (6%)",
    "d401_item_per_step": "the GPU idles anyway on this launch-bound MLP: .item() costs 37 us; D202 "
    "first",
}
CLEAN_MISSES = (
    "on the H100 D208 flagged the 10-class head Linear(256->10); layers under 1% of the weights are "
    "no longer named (model_facts), not re-run on a GPU since"
)


def codes(report: dict) -> list[str]:
    return [finding["id"] for finding in report["findings"]]


@pytest.mark.parametrize(
    "script",
    [
        pytest.param(name, marks=pytest.mark.xfail(reason=KNOWN_MISSES[name], strict=False))
        if name in KNOWN_MISSES
        else name
        for name in sorted(PLANTED)
    ],
)
def test_planted_gpu_problem_is_the_top_finding(script, tmp_path):
    alone_only(script)
    found = codes(diagnose(script, tmp_path=tmp_path))
    assert found and found[0] == PLANTED[script], found


@pytest.mark.parametrize("script", sorted(PLANTED))
def test_fixed_control_is_quiet_on_its_rule(script, tmp_path):
    alone_only(script)
    found = codes(diagnose(script, "--fixed", tmp_path=tmp_path))
    assert PLANTED[script] not in found and "D402" not in found, found


@pytest.mark.xfail(reason=CLEAN_MISSES, strict=False)
@pytest.mark.parametrize("script", ["clean_bf16", "clean_workers_augment"])
def test_clean_bf16_loop_gets_no_gpu_finding(script, tmp_path):
    found = codes(diagnose(script, tmp_path=tmp_path))
    assert not GPU_RULES & set(found), found


def test_cuda_phase_times_agree_with_the_profilers_kernel_total():
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Linear(4096, 4096) for _ in range(6)]).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
    x = torch.randn(4096, 4096, device="cuda")

    def step():
        loss = model(x).square().mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    with torchdoctor.watch(steps=10, warmup=3, whatif=False) as watch:
        for _ in range(13):
            step()
    steps = [s for s in watch.report.run.steps if s.device_phases]
    assert len(steps) >= 5
    device_step = sorted(sum(s.device_phases.values()) for s in steps)[len(steps) // 2]
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            step()
        torch.cuda.synchronize()
    kernels = sum(e.self_device_time_total for e in prof.key_averages()) / 1e6 / 5
    # compute-bound: the device is busy the whole step, so event time = kernel time (+ gaps)
    assert abs(device_step - kernels) / kernels < 0.10, (device_step, kernels)
