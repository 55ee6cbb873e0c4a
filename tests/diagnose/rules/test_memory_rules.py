"""Memory rules D502-D506, the memory view and its renderers, on recorded observations: CUDA runs
(allocator readings, an out-of-memory message as torch prints it) are tested here on CPU."""

from __future__ import annotations

import dataclasses

from rule_builders import evidence_text, good_cpu_run, good_h100_run, only

from torchdoctor.diagnose.observations import (
    MemoryObservation,
    MemoryPoint,
    ModuleActivations,
    OptimizerObservation,
    OutOfMemoryObservation,
    RetainedTensors,
)
from torchdoctor.diagnose.probes.out_of_memory import parse_message
from torchdoctor.diagnose.report.builder import build_report
from torchdoctor.diagnose.report.memory_render import memory_html, memory_lines
from torchdoctor.diagnose.rules import d502_optimizer_state_memory as d502
from torchdoctor.diagnose.rules import d503_memory_growth as d503
from torchdoctor.diagnose.rules import d504_step_time_growth as d504
from torchdoctor.diagnose.rules import d505_block_activations as d505
from torchdoctor.diagnose.rules import d506_out_of_memory as d506
from torchdoctor.diagnose.rules._memory import checkpoint_candidates, memory_fixes

MIB, GIB = 2**20, 2**30
CUDA_OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
    "capacity of 79.19 GiB of which 1.06 GiB is free. Including non-PyTorch memory, this process "
    "has 78.12 GiB memory in use. Of the allocated memory 70.50 GiB is allocated by PyTorch, and "
    "6.25 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large "
    "try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation."
)


def transformer_modules(layer_gib: float = 12.0) -> list[ModuleActivations]:
    layers = [
        ModuleActivations(f"blocks.{i}", "TransformerLayer", int(layer_gib * GIB), 2, True, GIB)
        for i in range(4)
    ]
    return [
        ModuleActivations("", "GPT", int((4 * layer_gib + 2) * GIB), 0, True, 0),
        ModuleActivations("blocks", "Sequential", int(4 * layer_gib * GIB), 1, True, GIB),
        *layers,
        ModuleActivations("embed", "Embedding", 2 * GIB, 1, False, 0),
    ]


def cuda_memory_run(**memory_changes):
    memory = MemoryObservation(
        source="cuda_allocator",
        peak_bytes=76 * GIB,
        capacity_bytes=80 * GIB,
        parameter_bytes=4 * GIB,
        gradient_bytes=4 * GIB,
        optimizer_state_bytes=8 * GIB,
        saved_activation_bytes=50 * GIB,
        activations_by_module=transformer_modules(),
        phase_step=2,
        phase_source="cuda_allocator",
        phases=[
            MemoryPoint("before_forward", 16 * GIB, 20 * GIB),
            MemoryPoint("after_forward", 66 * GIB, 72 * GIB),
            MemoryPoint("after_backward", 20 * GIB, 74 * GIB),
            MemoryPoint("after_optimizer", 16 * GIB, 74 * GIB),
        ],
        phase_peaks={"forward": 68 * GIB, "backward": 76 * GIB, "optimizer": 21 * GIB},
    )
    memory = dataclasses.replace(memory, **memory_changes)
    optimizer = OptimizerObservation("AdamW", "train.py:20", 4 * GIB, 8 * GIB, 8, set_to_none=False)
    return good_h100_run(memory=memory, optimizers=[optimizer])


def test_cuda_oom_message_is_read_for_request_allocated_and_reserved_free():
    oom = OutOfMemoryObservation(message="", device="cuda")
    parse_message(CUDA_OOM, oom)
    assert oom.requested_bytes == 2 * GIB
    assert oom.allocated_bytes == int(70.5 * GIB)
    assert oom.reserved_free_bytes == int(6.25 * GIB)
    assert abs(oom.capacity_bytes - 79.19 * GIB) < GIB / 100


def test_d506_explains_a_cuda_oom_with_fixes_ranked_by_bytes():
    oom = OutOfMemoryObservation(message=CUDA_OOM.splitlines()[0][:120], device="cuda", step=0,
                                 phase="forward", module="blocks.3 (TransformerLayer)",
                                 location="train.py:41")  # fmt: skip
    parse_message(CUDA_OOM, oom)
    run = cuda_memory_run(out_of_memory=oom)
    run.status, run.exit_code = "crashed", 1
    run.precision.autocast_forwards, run.precision.autocast_dtype = 0, None
    finding = only(d506.check(run), "D506")
    text = evidence_text(finding)
    assert finding.severity == "error"
    assert "inside blocks.3 (TransformerLayer), at train.py:41" in text and "exit code 1" in text
    assert "optimizer state 8.0 GiB" in text and "free 6.2 GiB" in text
    assert "expandable_segments" in text  # 6.25 GiB free of 70.5 allocated: fragmentation
    freed = [fix["frees_bytes"] for fix in finding.details["fixes"]]
    assert freed == sorted(freed, reverse=True) and len(freed) == 5
    whats = " ".join(fix["what"] for fix in finding.details["fixes"])
    for fix in ("autocast", "checkpointing of blocks.0", "micro-batch", "set_to_none", "lighter"):
        assert fix in whats
    # four 12 GiB layers keeping their 1 GiB inputs: 4 x 11 GiB, less the 12 GiB held again
    # while one of them is recomputed
    checkpointing = next(f for f in finding.details["fixes"] if "checkpointing" in f["what"])
    assert checkpointing["frees_bytes"] == 32 * GIB


def test_d506_silent_without_oom_and_absurd_request_points_at_the_shape():
    assert d506.check(cuda_memory_run()) == []
    oom = OutOfMemoryObservation(message="RuntimeError: DefaultCPUAllocator: can't allocate "
                                 "memory", requested_bytes=600 * GIB, capacity_bytes=24 * GIB,
                                 location="model.py:16")  # fmt: skip
    finding = only(d506.check(good_cpu_run(memory=MemoryObservation(out_of_memory=oom))), "D506")
    assert "model.py:16" in finding.fix and "more than the whole" in evidence_text(finding)


def test_checkpoint_candidates_look_inside_a_block_that_holds_everything():
    run = cuda_memory_run()
    names = [m.name for m in checkpoint_candidates(run)]
    assert sorted(names) == ["blocks.0", "blocks.1", "blocks.2", "blocks.3"]
    split = transformer_modules()[:2] + [ModuleActivations("head", "Linear", 30 * GIB, 1, True)]
    split[1] = dataclasses.replace(split[1], bytes=20 * GIB)
    names = [m.name for m in checkpoint_candidates(cuda_memory_run(activations_by_module=split))]
    assert names == ["head", "blocks"]
    # a chain of elementwise layers: each saves only its input, the block is the segment
    chain = [ModuleActivations("trunk", "Sequential", 50 * GIB, 1, True, GIB)] + [
        ModuleActivations(f"trunk.{i}", "GELU", 10 * GIB, 2, False, 10 * GIB) for i in range(5)
    ]
    names = [m.name for m in checkpoint_candidates(cuda_memory_run(activations_by_module=chain))]
    assert names == ["trunk"]


def test_d505_names_the_modules_and_is_a_warning_when_memory_bound():
    finding = only(d505.check(cuda_memory_run()), "D505")
    assert finding.severity == "warning"  # 76 of 80 GiB
    assert (
        "activation_checkpointing=['blocks.0', 'blocks.1', 'blocks.2', 'blocks.3']" in finding.fix
    )
    assert "blocks (Sequential) holds" in evidence_text(finding)
    relaxed = cuda_memory_run(peak_bytes=30 * GIB)
    assert only(d505.check(relaxed), "D505").severity == "info"


def test_d505_silent_when_activations_are_small_or_spread():
    small = cuda_memory_run(saved_activation_bytes=10 * MIB, activations_by_module=[])
    assert d505.check(small) == []
    below_fixed = cuda_memory_run(saved_activation_bytes=7 * GIB)  # 16 GiB of fixed memory
    assert d505.check(below_fixed) == []


def test_d502_reports_state_dominating_the_step_at_any_memory_use():
    run = good_cpu_run(memory=MemoryObservation(
        source="process_rss", peak_bytes=2 * GIB, capacity_bytes=64 * GIB, parameter_bytes=24 * MIB,
        gradient_bytes=24 * MIB, optimizer_state_bytes=48 * MIB, saved_activation_bytes=MIB,
    ))  # fmt: skip
    finding = only(d502.check(run), "D502")
    assert "Optimizer state is 49% of the step's tensors" in evidence_text(finding)
    run.memory.saved_activation_bytes = 200 * MIB  # activations dominate instead
    assert d502.check(run) == []


def steps_with(run, memory=None, times=None):
    for i, step in enumerate(run.steps):
        if memory is not None:
            step.memory_bytes = memory(i)
        if times is not None:
            step.wall_s = times(i)
            step.cpu_share = 1.0
    return run


def test_d503_growth_per_step_and_retained_losses_with_their_holder():
    run = steps_with(good_cpu_run(), memory=lambda i: 400 * MIB + i * 3 * MIB)
    run.memory.step_source = "process_rss"
    run.memory.retained = [RetainedTensors("loss", 9, 9, True, 36, "train.py:22",
                                           "list `losses` (10 items)")]  # fmt: skip
    finding = only(d503.check(run), "D503")
    text = evidence_text(finding)
    assert "grew by 3.0 MiB per step" in text and "list `losses` (10 items)" in text
    assert "train.py:22" in text and finding.fix.startswith("losses.append(loss.item())")


def test_d503_silent_for_flat_or_noisy_memory_and_detached_scalars():
    flat = steps_with(good_cpu_run(), memory=lambda i: 400 * MIB + (i % 2) * 6 * MIB)
    assert d503.check(flat) == []
    flat.memory.retained = [RetainedTensors("loss", 9, 9, False, 36, "train.py:22")]
    assert d503.check(flat) == []


def test_d503_on_cpu_a_few_allocator_jumps_are_not_growth_every_step():
    # the same rise (5 MiB a step, over the RSS floor of 2 MiB a step and 32 MiB in all) as a
    # leak adds it, and as the allocator does: two jumps of 24 MiB with a creep of 4 KiB between
    # (embedding gradients reallocated each step)
    steady = steps_with(good_cpu_run(), memory=lambda i: 400 * MIB + i * 5 * MIB)
    steady.memory.step_source = "process_rss"
    assert "grew by 5.0 MiB per step" in evidence_text(only(d503.check(steady), "D503"))
    n = len(steady.steps)
    jumps = steps_with(
        good_cpu_run(), memory=lambda i: 400 * MIB + i * 4096 + (3 * i // n) * 24 * MIB
    )
    jumps.memory.step_source = "process_rss"
    assert d503.check(jumps) == []
    # a kept loss found by the probe is reported whatever the shape of the rise
    jumps.memory.retained = [RetainedTensors("loss", 9, 9, True, 36, "train.py:22")]
    assert only(d503.check(jumps), "D503")


def test_d503_silent_for_slow_process_memory_growth_over_many_steps():
    """examples/word_language_model under whole-cycle diagnose: process RSS rose 0.5 MiB per step
    for 78 steps (43 MiB) with no tensor kept alive; the same program run plainly stays flat. A
    slow RSS drift is not a leak the program owns, however long the run; a fast one still is."""

    def rss_run(first_mib: int, per_step_mib: float, steps: range):
        run = good_cpu_run()
        run.steps = [dataclasses.replace(run.steps[0], index=i,
                                         memory_bytes=int((first_mib + i * per_step_mib) * MIB))
                     for i in steps]  # fmt: skip
        run.memory.step_source = "process_rss"
        return run

    assert d503.check(rss_run(330, 0.5, range(3, 81))) == []
    fast = rss_run(400, 5, range(3, 13))
    assert "grew by 5.0 MiB per step" in evidence_text(only(d503.check(fast), "D503"))


def test_d503_on_cpu_resident_growth_without_heap_growth_is_no_leak():
    """torchdiffeq's CNF: dopri5 takes more steps as it trains, so each step's activations peak
    higher and the process's resident memory follows the high-water mark (84 MiB over 13 steps),
    while nothing is kept across steps: D503 [warning] "Memory grows with every step". The C
    heap's bytes in use tell the two apart; where they cannot be read, the rise is information."""
    rising = steps_with(good_cpu_run(), memory=lambda i: 400 * MIB + i * 7 * MIB)
    rising.memory.step_source = "process_rss"
    first, last = rising.steps[0].index, rising.steps[-1].index
    rising.memory.heap_in_use = [(first, 60 * MIB), (last, 61 * MIB)]
    assert d503.check(rising) == []
    rising.memory.heap_in_use = [(first, 60 * MIB), (last, 60 * MIB + (last - first) * 7 * MIB)]
    leak = only(d503.check(rising), "D503")
    assert leak.severity == "warning" and "heap's bytes in use grew" in evidence_text(leak)
    rising.memory.heap_in_use = []
    unknown = only(d503.check(rising), "D503")
    assert unknown.severity == "info" and "cannot tell" in evidence_text(unknown)
    assert "grew by 7.0 MiB per step" in evidence_text(unknown)


def test_d504_step_time_growth_and_silence_on_noise():
    run = steps_with(good_cpu_run(), times=lambda i: 0.010 + 0.003 * i)
    finding = only(d504.check(run), "D504")
    assert "rose by 3.0 ms per step" in evidence_text(finding) and finding.saving > 0.2
    noisy = steps_with(good_cpu_run(), times=lambda i: 0.010 * (1 + (i * 7919 % 5) / 10))
    assert d504.check(noisy) == []


def test_memory_fixes_skip_what_is_already_done():
    run = cuda_memory_run()
    run.optimizers[0].set_to_none = True
    run.precision.autocast_forwards = run.precision.forwards = 8
    whats = " ".join(f.what for f in memory_fixes(run))
    assert "set_to_none" not in whats and "autocast" not in whats


def test_memory_view_renders_phases_reserved_and_modules():
    report = build_report(cuda_memory_run(), [])
    lines = "\n".join(memory_lines(report.memory))
    assert "after forward 66.0 GiB (+50.0 GiB), reserved 72.0 GiB, peak inside 68.0 GiB" in lines
    assert "blocks (Sequential) 48.0 GiB 96%" in lines
    html = memory_html(report.memory)
    assert "<h3>Memory by phase (step 2)</h3>" in html and "blocks.0" in html
    assert report.to_dict()["memory"]["held"]["optimizer state"] == 8 * GIB
