"""Hand-built RunObservations for the rule tests: a CPU run and a CUDA H100 run as the probes
would record them. Phase seconds are per step; every step gets the same phases unless given."""

from __future__ import annotations

import dataclasses

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import (
    EnvironmentObservation,
    LoaderObservation,
    ModuleObservation,
    OptimizerObservation,
    PrecisionObservation,
    RunObservation,
    StepObservation,
)

# the implementation flags torch's AdamW accepts, as the optimizer probe reads them
TORCH_ADAMW = ("foreach", "fused")


def make_steps(n: int = 8, batch_size: int = 64, **phases: float) -> list[StepObservation]:
    full = {
        p: phases.get(p, 0.0) for p in ("data", "h2d", "forward", "backward", "optimizer", "other")
    }
    return [
        StepObservation(
            index=i, wall_s=sum(full.values()), phases=dict(full), batch_size=batch_size
        )
        for i in range(n)
    ]


def cpu_environment() -> EnvironmentObservation:
    return EnvironmentObservation(
        device_type="cpu",
        device_name="x86_64",
        cpu_count=8,
        torch_version="2.13.0",
        input_shapes_fixed=True,
    )


def h100_environment(**changes) -> EnvironmentObservation:
    env = EnvironmentObservation(
        device_type="cuda",
        device_name="NVIDIA H100 80GB HBM3",
        compute_capability=(9, 0),
        tensor_cores=True,
        bf16_supported=True,
        torch_version="2.11.0",
        cpu_count=16,
        cudnn_benchmark=False,
        tf32_matmul=False,
        tf32_cudnn=True,
        input_shapes_fixed=True,
    )
    return dataclasses.replace(env, **changes)


def good_loader(**changes) -> LoaderObservation:
    loader = LoaderObservation(
        location="train.py:30",
        role="train",
        dataset_type="TensorDataset",
        dataset_len=6400,
        batch_size=64,
        num_workers=4,
        pin_memory=False,
        persistent_workers=True,
        prefetch_factor=2,
        epochs_started=1,
        workers_spawned=4,
        worker_startup_s=[0.05],
        batches=8,
        wait_s=0.001,
        cpu_count=8,
    )
    return dataclasses.replace(loader, **changes)


def mlp_model(**changes) -> ModuleObservation:
    model = ModuleObservation(
        class_name="MLP",
        location="train.py:12",
        parameters=200_000,
        trainable_parameters=200_000,
        parameter_bytes=800_000,
        parameter_dtypes={"float32": 200_000},
        parameter_tensors=6,
        dropout_layers=1,
    )
    return dataclasses.replace(model, **changes)


def good_cpu_run(**changes) -> RunObservation:
    """A well-written CPU loop: workers, no syncs, inference_mode eval, float32."""
    run = RunObservation(
        target="train.py",
        status="stopped",
        warmup_steps=3,
        steps=make_steps(data=0.0005, forward=0.004, backward=0.008, optimizer=0.001, other=0.0002),
        environment=cpu_environment(),
        loaders=[good_loader()],
        models=[mlp_model()],
        optimizers=[
            OptimizerObservation(
                class_name="AdamW",
                location="train.py:20",
                implementations=TORCH_ADAMW,
                param_bytes=800_000,
                state_bytes=1_600_000,
                steps=8,
            )
        ],
        precision=PrecisionObservation(forwards=8, float32_ops=24),
    )
    run.compute.ops_per_step = 80
    run.compute.dispatch_overhead_s = 5e-6
    run.compute.mean_op_s = 0.013 / 80
    run.compute.utilization = 0.3
    run.evaluation.forwards = 4
    run.evaluation.under_inference_mode = 4
    run.evaluation.seconds = 0.02
    return dataclasses.replace(run, **changes)


def good_h100_run(**changes) -> RunObservation:
    """A well-treated CUDA loop: pinned non-blocking copies, bf16 autocast, cudnn.benchmark."""
    run = good_cpu_run(
        environment=h100_environment(cudnn_benchmark=True, tf32_matmul=True),
        loaders=[good_loader(pin_memory=True, cpu_count=16)],
        models=[mlp_model(device="cuda:0")],
        precision=PrecisionObservation(
            forwards=8, autocast_forwards=8, autocast_dtype="bfloat16", low_precision_ops=24
        ),
        steps=make_steps(data=0.0002, h2d=0.0001, forward=0.003, backward=0.005, optimizer=0.0005),
    )
    run.transfers.copies_per_step = 2
    run.transfers.bytes_per_step = 64 * 3 * 32 * 32 * 4
    run.transfers.pinned_fraction = 1.0
    run.transfers.non_blocking_fraction = 1.0
    run.transfers.seconds_per_step = 0.0001
    for step in run.steps:
        step.gpu_idle_s = 0.0002
    return dataclasses.replace(run, **changes)


def only(findings: list[Finding], code: str) -> Finding:
    matching = [f for f in findings if f.id == code]
    assert len(matching) == 1, f"expected one {code} finding, got {findings}"
    return matching[0]


def evidence_text(finding: Finding) -> str:
    return " ".join(finding.evidence)


def line_profiled_run(other_s: float = 0.006) -> RunObservation:
    """good_cpu_run with `other_s` of every step outside the model (the program's own code) and a
    line profile of 400 samples of 3 ms each; the test puts its LineStats in `run.lines.lines`."""
    run = good_cpu_run()
    run.steps = [
        type(step)(**{**step.__dict__, "phases": {**step.phases, "other": other_s}})
        for step in run.steps
    ]
    for step in run.steps:
        step.wall_s = sum(step.phases.values())
    run.lines.samples = 400
    run.lines.seconds_per_sample = 0.003
    return run
