"""D2xx compute and precision rules on hand-built CPU and CUDA H100 observations."""

from __future__ import annotations

import pytest
from rule_builders import (
    TORCH_ADAMW,
    evidence_text,
    good_cpu_run,
    good_h100_run,
    good_loader,
    h100_environment,
    make_steps,
    mlp_model,
    only,
)

from torchdoctor.diagnose.observations import (
    OptimizerObservation,
    PrecisionObservation,
    WhatIfTiming,
)
from torchdoctor.diagnose.rules import (
    d201_float64_compute as d201,
)
from torchdoctor.diagnose.rules import (
    d202_batch_too_small as d202,
)
from torchdoctor.diagnose.rules import (
    d203_tiny_op_loop as d203,
)
from torchdoctor.diagnose.rules import (
    d204_no_autocast as d204,
)
from torchdoctor.diagnose.rules import (
    d205_cudnn_benchmark_off as d205,
)
from torchdoctor.diagnose.rules import (
    d206_tf32_off as d206,
)
from torchdoctor.diagnose.rules import (
    d207_channels_last_missing as d207,
)
from torchdoctor.diagnose.rules import (
    d208_dims_not_multiple_of_8 as d208,
)
from torchdoctor.diagnose.rules import (
    d209_clip_scaled_gradients as d209,
)
from torchdoctor.diagnose.rules import (
    d210_optimizer_not_fused as d210,
)


def fp32_h100_run(**env_changes):
    """As an H100 records a float32 loop with no precision settings touched."""
    return good_h100_run(
        environment=h100_environment(**env_changes),
        precision=PrecisionObservation(forwards=8, float32_ops=24),
        steps=make_steps(data=0.0002, h2d=0.0001, forward=0.003, backward=0.006, optimizer=0.0007),
    )


def test_d201_fires_on_float64_ops_and_parameters():
    run = good_cpu_run(
        precision=PrecisionObservation(forwards=8, float64_ops=24),
        models=[mlp_model(parameter_dtypes={"float64": 200_000})],
    )
    finding = only(d201.check(run), "D201")
    compute_share = 0.013 / 0.0137
    assert finding.saving == pytest.approx(compute_share * 0.5)
    text = evidence_text(finding)
    assert "24 of 24" in text and "200,000 of 200,000" in text and "95%" in text
    assert finding.changes_semantics is False and "model.float()" in finding.fix


def test_d201_names_a_float64_default_dtype_as_the_cause():
    run = good_cpu_run(precision=PrecisionObservation(forwards=8, float64_ops=24))
    run.environment.default_dtype = "float64"
    finding = only(d201.check(run), "D201")
    assert "torch.set_default_dtype(torch.float32)" in finding.fix
    assert "model.float()" not in finding.fix  # alone it would mismatch every new tensor
    assert "get_default_dtype() is float64" in evidence_text(finding)


def test_d201_silent_on_float32_and_on_rare_float64_ops():
    assert d201.check(good_cpu_run()) == []
    rare = good_cpu_run(precision=PrecisionObservation(forwards=8, float32_ops=95, float64_ops=5))
    assert d201.check(rare) == []


def overhead_run(ops: float, tensors: int, **compute):
    run = good_cpu_run(
        models=[mlp_model(parameter_tensors=tensors)],
        steps=make_steps(batch_size=4, data=0.0002, forward=0.004, backward=0.005, optimizer=0.001),
    )
    run.compute.ops_per_step = ops
    run.compute.dispatch_overhead_s = 8e-6
    run.compute.mean_op_s = 0.010 / ops
    run.compute.utilization = compute.get("utilization", 0.004)
    return run


def test_d202_fires_when_ops_are_trivial_and_the_op_count_is_normal():
    run = overhead_run(ops=1000, tensors=40)  # 10 µs per op vs 8 µs trivial; expected ~1800 ops
    finding = only(d202.check(run), "D202")
    assert finding.saving == pytest.approx(1000 * 8e-6 * 0.75 / 0.0102)
    assert finding.changes_semantics is True and finding.severity == "info"
    text = evidence_text(finding)
    assert "1000 ops" in text and "8.0 µs" in text and "10.0 µs" in text and "Batch size: 4" in text
    assert "batch_size=16" in finding.fix
    # the script's own optimizer (AdamW), scaled by the sqrt rule, not an SGD it does not use
    assert "torch.optim.AdamW(" in finding.fix and "lr=2 * lr" in finding.fix
    assert "SGD" not in finding.fix


def test_d202_ignores_a_utilization_above_the_peak():
    # a peak measured on a busy machine can come out below what the model achieves
    finding = only(d202.check(overhead_run(ops=1000, tensors=40, utilization=1.8)), "D202")
    assert "FLOP utilisation" not in evidence_text(finding)


def test_d202_fix_counts_accumulation_and_plain_sgd_scales_linearly():
    run = overhead_run(ops=1000, tensors=40)
    for step in run.steps:  # 4 micro-batches of 8 samples per optimizer step
        step.batch_size, step.micro_batches = 32, 4
    run.optimizers[0].class_name = "SGD"
    finding = only(d202.check(run), "D202")
    assert "32 samples per optimizer step (8 per micro-batch x 4 micro-batches)" in (
        evidence_text(finding)
    )
    assert "batch_size=32" in finding.fix and "128 per optimizer step" in finding.fix
    assert "accumulate 1 micro-batch(es) of 32 instead of 4" in finding.fix
    assert "torch.optim.SGD(model.parameters(), lr=4 * lr)" in finding.fix


def test_d202_fix_multiplies_whole_batches_when_the_last_batch_of_an_epoch_is_short():
    """An accelerate causal-LM example (2 per micro-batch x 4) averaged 7.8 samples per step
    over epochs ending in a short batch; the fix read "batch_size=8 ... = 31 per step"."""
    run = overhead_run(ops=1000, tensors=40)
    for i, step in enumerate(run.steps):
        step.batch_size, step.micro_batches = (5 if i == len(run.steps) - 1 else 8), 4
    finding = only(d202.check(run), "D202")
    assert "batch_size=8, ...)  # x 4 micro-batches = 32 per optimizer step" in finding.fix


def test_d202_prints_and_scales_the_typical_batch_not_a_mean_a_short_last_batch_pulls_down():
    """pytorch-fm: 186 batches of 256 and one of 128 an epoch. D202 printed "Batch size: 255"
    and proposed batch_size=1020 (4 x the steps' mean); the program's batch is 256."""
    run = overhead_run(ops=1000, tensors=40)
    for i, step in enumerate(run.steps):
        step.batch_size = 128 if i == len(run.steps) - 1 else 256
    run.loaders = [good_loader(batch_size=256)]
    finding = only(d202.check(run), "D202")
    assert "Batch size: 256." in evidence_text(finding)
    assert "batch_size=1024, ...)" in finding.fix, finding.fix
    assert d202.batch_candidate(run).micro_batch == 256  # the batch the what-if times


def test_d202_fix_scales_the_loaders_batch_size_when_its_batches_hold_more_rows():
    """PyG's graph_gps example loads 32 graphs a batch, 677 node rows for the model: D202 said
    "Batch size: 677" and fixed with `DataLoader(dataset, batch_size=2708, ...)` (4 x the node
    rows), not 4 x 32 graphs. The knob is the loader's own batch_size."""
    run = overhead_run(ops=1000, tensors=40)
    for step in run.steps:
        step.batch_size = 677
    run.loaders = [good_loader(batch_size=32)]
    finding = only(d202.check(run), "D202")
    assert "batch_size=128, ...)" in finding.fix and "2708" not in finding.fix, finding.fix
    assert "The training DataLoader's batch_size is 32" in evidence_text(finding)


def test_d202_fix_names_a_custom_optimizer_that_stepped_without_torch_optim():
    run = overhead_run(ops=1000, tensors=40)
    run.optimizers = [
        OptimizerObservation(class_name="SGD", steps=0),
        OptimizerObservation(class_name="Lion", steps=8),
    ]
    fix = only(d202.check(run), "D202").fix
    assert "optimizer = Lion(model.parameters(), lr=2 * lr)" in fix and "torch.optim" not in fix


def test_d202_fix_without_a_dataloader_names_the_sampled_batch():
    run = overhead_run(ops=1000, tensors=40)
    run.loaders = []
    run.optimizers = []  # parameters updated by hand
    finding = only(d202.check(run), "D202")
    assert "DataLoader" not in finding.fix and "optimizer" not in finding.fix
    assert "batch_size = 16  # the batch you slice or sample" in finding.fix
    assert "lr = 4 * lr" in finding.fix


def test_d202_silent_when_utilization_is_fine_or_ops_do_real_work():
    assert d202.check(overhead_run(ops=1000, tensors=40, utilization=0.4)) == []
    assert d202.check(overhead_run(ops=100, tensors=40)) == []  # 100 µs per op: real work
    assert d202.check(good_cpu_run()) == []
    few_ops = overhead_run(ops=40, tensors=40)  # 40 x 8 µs is 3% of the step: not worth it
    few_ops.compute.mean_op_s = 10e-6
    assert d202.check(few_ops) == []


def test_d203_fires_on_far_more_ops_than_the_model_explains():
    run = overhead_run(ops=1100, tensors=2)  # expected 280 ops
    finding = only(d203.check(run), "D203")
    # only the extra ops' fixed cost (the dispatch floor) is removable, never the whole step
    excess_s = (1100 - 280) * run.compute.dispatch_overhead_s
    assert finding.saving == pytest.approx(excess_s / 0.0102) and finding.saving < 0.7
    assert "1100 ops" in evidence_text(finding) and "2 parameter tensors" in evidence_text(finding)
    assert d202.check(run) == []  # the loop, not the batch, explains this overhead


def test_d202_counts_a_recurrent_modules_time_step_ops_as_the_models():
    # a CRNN at batch 2: 4660 ops per step from the GRU's time steps in C++, 369 Python calls;
    # not a Python loop (D203 stays silent), so the batch is judged
    run = overhead_run(ops=1100, tensors=2)  # expected 280 ops
    run.compute.python_calls_per_step = 150.0
    assert d203.check(run) == []
    assert only(d202.check(run), "D202").severity == "info"
    run.compute.python_calls_per_step = 900.0  # the calls of a Python loop: D203's, as before
    assert d202.check(run) == [] and d203.check(run) != []


def test_d203_saving_is_capped_by_the_models_part_of_the_step():
    # ops below the dispatch floor (a floor measured high, or a busy machine): the extra ops'
    # fixed cost exceeds the step; the saving stays under the model's share, never "100%"
    run = overhead_run(ops=3000, tensors=2)
    run.compute.mean_op_s = 0.010 / 3000
    finding = only(d203.check(run), "D203")
    model_share = 0.010 / 0.0102  # all but the data wait
    assert finding.saving == pytest.approx(0.9 * model_share) and finding.saving < 0.9


def test_debugging_modes_silence_the_per_op_overhead_rules():
    # anomaly detection or the program's profiler inflates every op: not a loop, not the batch
    for mode in ("anomaly", "profiler"):
        run = overhead_run(ops=1100, tensors=2)
        if mode == "anomaly":
            run.environment.anomaly_detection = True
        else:
            run.habits.profiler_active_share = 1.0
        assert d203.check(run) == [] and d202.check(run) == []
    assert d203.check(overhead_run(ops=1100, tensors=2)) != []


def test_d203_never_claims_more_than_the_extra_ops_took():
    """A trivial-op floor timed on a busy machine above the program's mean op (REINFORCE in the
    real-programs corpus: 27.7 us floor, 17.6 us mean op) gave "saves ~100% of run time"."""
    run = overhead_run(ops=1100, tensors=2)  # expected 280 ops
    run.compute.dispatch_overhead_s = 1.5 * run.compute.mean_op_s
    finding = only(d203.check(run), "D203")
    ops_s = 1100 * run.compute.mean_op_s
    assert finding.saving == pytest.approx((1100 - 280) / 1100 * ops_s / 0.0102)
    assert finding.saving < 0.9


def test_d203_silent_on_normal_op_counts_real_work_or_unmeasured_floor():
    assert d203.check(overhead_run(ops=1000, tensors=40)) == []
    heavy = overhead_run(ops=1100, tensors=2)
    heavy.compute.dispatch_overhead_s = 0.5e-6  # 9 µs per op is 18 trivial ops: real work
    assert d203.check(heavy) == []
    unmeasured = overhead_run(ops=1100, tensors=2)
    unmeasured.compute.dispatch_overhead_s = None
    assert d203.check(unmeasured) == []


def busy(run, share: float):
    """The same run on a machine where other processes took CPU: every wall time is stretched
    by 1/share, the tight-loop dispatch floor is not (QA2-6)."""
    for step in run.steps:
        # waiting for the workers' batches is idle time even on a quiet machine
        step.cpu_share = share * (step.wall_s - step.phases["data"]) / step.wall_s
        step.wall_s /= share
        step.phases = {p: t / share for p, t in step.phases.items()}
    run.compute.cpu_share = run.steps[0].cpu_share
    run.compute.mean_op_s /= share
    return run


@pytest.mark.parametrize(
    "rule, code, ops, tensors", [(d202, "D202", 1000, 40), (d203, "D203", 1100, 2)]
)
def test_d202_d203_same_finding_on_a_quiet_and_a_busy_machine(rule, code, ops, tensors):
    quiet = only(rule.check(busy(overhead_run(ops=ops, tensors=tensors), 1.0)), code)
    assert quiet.saving == pytest.approx(
        only(rule.check(overhead_run(ops=ops, tensors=tensors)), code).saving
    )  # share unknown: taken as 1
    # 6x slower in wall time (QA2-6's char-LSTM: 15.9 ms quiet, 100 ms busy): same finding
    loaded = only(rule.check(busy(overhead_run(ops=ops, tensors=tensors), 1 / 6)), code)
    assert loaded.saving == pytest.approx(quiet.saving)
    assert loaded.details["mean_op_s"] == pytest.approx(quiet.details["mean_op_s"])


def test_d202_d203_stay_silent_on_real_work_however_busy_the_machine():
    # 100 µs per op of CPU time is real work; the share does not shrink it below the floor
    assert d202.check(busy(overhead_run(ops=100, tensors=40), 0.5)) == []
    assert d203.check(busy(overhead_run(ops=100, tensors=2), 0.5)) == []


def test_d202_d203_treat_uncounted_ops_as_unknown():
    # torch.compile runs skip op counting: None is unknown, never zero ops or tiny ops
    for tensors in (40, 2):
        run = overhead_run(ops=1000, tensors=tensors)
        run.compute.ops_per_step = None
        run.compute.mean_op_s = None
        assert d202.check(run) == [] and d203.check(run) == []


def test_cpu_share_is_not_applied_to_gpu_runs():
    from torchdoctor.diagnose.rules._overhead import cpu_share

    run = good_h100_run()
    run.compute.cpu_share = 0.2  # the thread waited for the GPU: not load
    assert cpu_share(run) == 1.0
    cpu_run = good_cpu_run()
    for step in cpu_run.steps:
        step.cpu_share = 0.4
    # the 0.5 ms of a 13.7 ms step spent waiting for the workers is idle, not load
    assert cpu_share(cpu_run) == pytest.approx(0.4 * 0.0137 / 0.0132)
    cpu_run.loaders[0].num_workers = 0  # loading in this thread is busy time
    assert cpu_share(cpu_run) == pytest.approx(0.4)


def test_d204_fires_on_fp32_loop_on_h100():
    finding = only(d204.check(fp32_h100_run()), "D204")
    compute_share = 0.009 / 0.010
    assert finding.saving == pytest.approx(compute_share * (0.5 * (1 - 1 / 8) + 0.5 * 0.3))
    text = evidence_text(finding)
    assert "H100" in text and "0 of 8" in text and "90%" in text
    assert "torch.bfloat16" in finding.fix


def test_d204_estimate_is_lower_when_tf32_is_already_on():
    on = only(d204.check(fp32_h100_run(tf32_matmul=True)), "D204")
    off = only(d204.check(fp32_h100_run()), "D204")
    assert on.saving < off.saving


def test_d204_suggests_float16_with_scaler_without_bf16():
    finding = only(
        d204.check(
            fp32_h100_run(bf16_supported=False, device_name="Tesla V100", compute_capability=(7, 0))
        ),
        "D204",
    )
    assert "torch.float16" in finding.fix and "GradScaler" in finding.fix


def test_d204_silent_on_cpu_under_autocast_and_without_tensor_cores():
    assert d204.check(good_cpu_run()) == []
    assert d204.check(good_h100_run()) == []
    assert d204.check(fp32_h100_run(tensor_cores=False)) == []


def conv_h100_run(**changes):
    run = fp32_h100_run(**changes)
    run.models = [
        mlp_model(
            class_name="ResNet",
            conv_layers=20,
            batchnorm_layers=20,
            conv_channels_last_inputs=False,
            device="cuda:0",
        )
    ]
    return run


def test_d205_fires_for_conv_net_with_fixed_shapes():
    finding = only(d205.check(conv_h100_run()), "D205")
    assert finding.saving == pytest.approx(0.9 * 0.5 * 0.1)
    assert finding.severity == "info" and "20 convolution" in evidence_text(finding)


def test_d205_silent_with_benchmark_on_varying_shapes_or_no_convs():
    assert d205.check(conv_h100_run(cudnn_benchmark=True)) == []
    assert d205.check(conv_h100_run(input_shapes_fixed=False)) == []
    assert d205.check(fp32_h100_run()) == []


def test_d206_fires_on_fp32_matmuls_with_tf32_off():
    finding = only(d206.check(fp32_h100_run()), "D206")
    assert finding.saving == pytest.approx(0.9 * 0.5 * 0.75)
    assert "(9, 0)" in evidence_text(finding) and "set_float32_matmul_precision" in finding.fix
    # conv nets already use TF32 through cuDNN: half the matmul share is left
    assert only(d206.check(conv_h100_run()), "D206").saving == pytest.approx(0.9 * 0.25 * 0.75)
    assert only(d204.check(fp32_h100_run()), "D204").saving > finding.saving


def test_d206_silent_before_ampere_with_tf32_or_autocast():
    assert d206.check(fp32_h100_run(compute_capability=(7, 5))) == []
    assert d206.check(fp32_h100_run(tf32_matmul=True)) == []
    assert d206.check(good_h100_run()) == []


def amp_conv_run(channels_last: bool | None):
    run = good_h100_run(
        models=[
            mlp_model(
                class_name="ResNet",
                conv_layers=20,
                conv_channels_last_inputs=channels_last,
                dims_not_multiple_of_8=["fc: Linear(512->10)"],
            )
        ]
    )
    return run


def test_d207_fires_for_nchw_convs_under_autocast():
    finding = only(d207.check(amp_conv_run(False)), "D207")
    compute_share = 0.008 / 0.0088
    assert finding.saving == pytest.approx(compute_share * 0.5 * 0.2)
    assert "bfloat16" in evidence_text(finding) and "channels_last" in finding.fix


def test_d207_silent_when_channels_last_unknown_or_without_autocast():
    assert d207.check(amp_conv_run(True)) == []
    assert d207.check(amp_conv_run(None)) == []
    assert d207.check(conv_h100_run()) == []  # fp32: D204 first


def test_d208_lists_layers_under_autocast():
    finding = only(d208.check(amp_conv_run(True)), "D208")
    assert finding.severity == "info" and finding.changes_semantics is True
    assert "fc: Linear(512->10)" in evidence_text(finding)
    assert finding.saving_basis == "estimated" and finding.saving_how.startswith("estimate:")
    assert d208.check(good_h100_run()) == []


def test_d208_claims_the_padded_linear_calls_measured_saving_or_nothing():
    """The what-if is CUDA only: a recorded timing of the unaligned Linear calls of one step."""
    run = amp_conv_run(True)
    step_s = run.steps[0].wall_s
    unit = "training step's unaligned Linear calls"
    run.whatif.timings.append(WhatIfTiming("dims.padded_to_8", unit, 0.2 * step_s, 0.1 * step_s))
    finding = only(d208.check(run), "D208")
    # the seconds saved per step: a tenth of the step, not the 10%-of-half-the-compute estimate
    assert finding.saving_basis == "measured" and finding.saving == pytest.approx(0.1)
    run.whatif.timings[0] = WhatIfTiming("dims.padded_to_8", unit, 0.1 * step_s, 0.1 * step_s)
    assert d208.check(run) == []  # padded measured no faster: nothing to claim


def test_padded_dims_probe_is_planned_under_autocast_on_cuda_only():
    from torchdoctor.diagnose.whatif import _Plan

    for run, planned in (
        (amp_conv_run(True), ["Linear sizes padded to multiples of 8"]),
        (good_h100_run(), []),  # every size a multiple of 8
    ):
        plan = _Plan(None, run)
        plan._plan_padded_dims()
        assert [label for _, label, _ in plan.items] == planned


def test_padded_dims_probe_finds_the_unaligned_linear_calls_of_a_replayed_forward():
    import torch
    from torch import nn

    from torchdoctor.diagnose.whatif.padded_dims import _calls, measure_padded, padded
    from torchdoctor.diagnose.whatif.replay import Replay

    model = nn.Sequential(nn.Linear(16, 100), nn.ReLU(), nn.Linear(100, 64), nn.Linear(64, 3))
    replay = Replay(model, (torch.randn(5, 16),), {}, "cpu")
    calls = [
        (layer.in_features, layer.out_features, tuple(shape)) for layer, shape in _calls(replay)
    ]
    assert calls == [(16, 100, (5, 16)), (100, 64, (5, 100)), (64, 3, (5, 64))]
    assert [padded(n) for n in (3, 8, 100)] == [8, 8, 104]
    assert measure_padded(replay, "float16", 0.5) == []  # CPU: tensor cores are not there
    assert all(not m._forward_hooks for m in model.modules())  # the shape hooks are removed


def test_d209_is_an_error_when_clipping_scaled_gradients():
    run = good_h100_run(
        optimizers=[
            OptimizerObservation(
                class_name="AdamW",
                location="train.py:20",
                grad_scaler=True,
                steps=8,
                clip_before_unscale=8,
            )
        ]
    )
    finding = only(d209.check(run), "D209")
    assert finding.severity == "error" and finding.saving == 0.0
    assert "8 gradient clipping call(s) over 8 step(s)" in evidence_text(finding)
    assert finding.fix.index("unscale_") < finding.fix.index("clip_grad_norm_")


def test_d209_silent_when_unscaled_first_or_without_scaler():
    assert d209.check(good_h100_run()) == []
    unscaled = good_h100_run(
        optimizers=[OptimizerObservation(class_name="AdamW", grad_scaler=True, steps=8)]
    )
    assert d209.check(unscaled) == []


def optimizer_bound_run(optimizer_s: float, **optimizer_fields):
    fields = {
        "class_name": "AdamW",
        "location": "train.py:20",
        "steps": 8,
        "implementations": TORCH_ADAMW,
        **optimizer_fields,
    }
    return good_cpu_run(
        steps=make_steps(forward=0.002, backward=0.004, optimizer=optimizer_s),
        optimizers=[OptimizerObservation(**fields)],
    )


def test_d210_flags_the_per_tensor_optimizer_loop_on_cpu():
    finding = only(d210.check(optimizer_bound_run(0.014)), "D210")
    assert finding.saving == pytest.approx(0.7 * 0.5) and finding.severity == "warning"
    assert "14.0 ms" in evidence_text(finding) and "70%" in evidence_text(finding)
    assert "fused=True" in finding.fix and "AdamW" in finding.fix
    small = only(d210.check(optimizer_bound_run(0.001)), "D210")  # 14%: information
    assert small.severity == "info"


def test_d210_silent_when_fused_unfusable_small_or_cuda_default():
    assert d210.check(optimizer_bound_run(0.014, foreach_or_fused=True)) == []
    lbfgs = optimizer_bound_run(0.014, class_name="LBFGS", implementations=())
    assert d210.check(lbfgs) == []
    assert d210.check(optimizer_bound_run(0.0003)) == []  # 5% of the step
    cuda = optimizer_bound_run(0.014)
    cuda.environment = h100_environment()
    assert d210.check(cuda) == []  # CUDA picks foreach by default
    cuda.optimizers[0].foreach_or_fused = False
    assert only(d210.check(cuda), "D210")


def test_d210_beside_another_optimizer_claims_only_the_looping_optimizers_own_step():
    # a recommender: SparseAdam over the embedding tables takes most of the 14 ms optimizer
    # phase; the dense MLP's Adam loops over its few tensors in 0.5 ms of it
    run = optimizer_bound_run(0.014, class_name="Adam", step_s=0.0005)
    run.optimizers.append(OptimizerObservation(class_name="SparseAdam", steps=8, step_s=0.0135))
    assert d210.check(run) == []  # 2.5% of the step
    run.optimizers[0].step_s = 0.006  # 30% of the step: information
    finding = only(d210.check(run), "D210")
    assert finding.saving == pytest.approx(0.3 * 0.5) and finding.severity == "info"
    assert "6.0 ms" in evidence_text(finding)
    alone = optimizer_bound_run(0.014, class_name="Adam", step_s=0.0005)
    assert only(d210.check(alone), "D210").saving == pytest.approx(0.35)  # the whole phase


def test_d210_names_the_optimizer_that_stepped():
    run = good_cpu_run(steps=make_steps(forward=0.002, backward=0.003, optimizer=0.004))
    unused = OptimizerObservation(class_name="SGD", location="train.py:33", steps=0)
    custom = OptimizerObservation(class_name="Lion", location="train.py:31", steps=8)
    run.optimizers = [unused, custom]
    assert d210.check(run) == []  # Lion has no fused/foreach; SGD never stepped
    run.optimizers = [
        unused,
        OptimizerObservation(
            class_name="AdamW", location="train.py:35", steps=8, implementations=TORCH_ADAMW
        ),
    ]
    finding = only(d210.check(run), "D210")
    assert "AdamW at train.py:35" in evidence_text(finding) and "AdamW(" in finding.fix


def test_d210_decides_from_the_implementations_the_optimizer_accepts():
    """RAdam, NAdam, RMSprop... have a foreach implementation and no fused one: a list of class
    names (Adam, AdamW, SGD, Adagrad) left them out (k08: an inner RAdam with foreach=False)."""
    radam = optimizer_bound_run(0.014, class_name="RAdam", implementations=("foreach",))
    finding = only(d210.check(radam), "D210")
    assert "RAdam(" in finding.fix and "foreach=True" in finding.fix
