"""The sixth set of planted scripts (styles.py PLANTED6) where the decision rests on counts and
structure, not timings: a torch.func training step diagnosed at all (the activation counter's
saved-tensor hooks used to crash it), the batch of a loader built with a batch_sampler, the
time-step ops of a recurrent module counted as the model's, correctness errors in hooks,
closures and accumulation contexts; and, on observations, a Python loop's header counted with
its body. Short runs (6 measured steps, no what-if timing); the full default-mode table, ranks
included, is `bench/planted_styles.py --set styles6`.
"""

from __future__ import annotations

import pytest
from planted import (
    assert_top_error_and_quiet_control,
    diagnose_planted,
    one_thread,  # noqa: F401  (autouse fixture: one torch thread)
)
from rule_builders import evidence_text, line_profiled_run, only
from styles import PLANTED6

from torchdoctor.diagnose.api import diagnose_script
from torchdoctor.diagnose.observations import LineStat
from torchdoctor.diagnose.rules import d801_hot_user_line as d801
from torchdoctor.diagnose.rules._common import expected_ops
from torchdoctor.diagnose.rules._overhead import ops_from_inside_calls


def diagnose(script: str, *args: str):
    return diagnose_planted(PLANTED6, script, *args)


def test_a_torch_func_training_step_is_diagnosed():
    # torch.func.grad refuses to run under any saved-tensor hook: the activation counter steps
    # aside for it instead of crashing the program; functional_call's wrapped parameters have no
    # storage to book
    report = diagnose("a03_functional_torch_func_pointnet_float64")
    assert len(report.run.steps) >= 6
    assert report.run.precision.float64_ops > 0  # what D201 reads (bench: its rank)


def test_a_batch_sampler_loaders_batch_is_the_samples_its_fetches_got():
    report = diagnose("a13_research_argparse_bucketed_text_collate_padding_loop")
    (loader,) = report.run.loaders
    assert loader.batch_size is None  # DataLoader(docs, batch_sampler=BucketBatchSampler(...))
    assert loader.samples_per_batch == pytest.approx(32, abs=1)  # the last batch may be short


def test_a_recurrent_modules_ops_come_from_inside_its_calls():
    # a CRNN at batch 2: thousands of ops per step from the GRU's time steps, few Python calls
    run = diagnose("a20_main_guard_crnn_batch_of_two").run
    expected = expected_ops(run)
    assert run.compute.ops_per_step > 3 * expected
    assert ops_from_inside_calls(run, expected)


def test_a_pipelines_next_stage_is_not_taken_for_the_next_epoch():
    # pretrain (no DataLoader), then fine-tune through one: whole-cycle mode stops where the
    # second stage begins and says how to measure it instead of calling it a whole cycle
    path = str(next(p.path for p in PLANTED6 if p.script.startswith("a09_")))
    report = diagnose_script(path, (), steps=None, warmup=3, whatif=False)
    note = next(n for n in report.run.notes if "whole-cycle mode stopped" in n)
    assert "another training stage" in note and "--warmup 42" in note, note


def test_anomaly_detection_turned_off_after_a_debug_phase_was_not_left_on():
    # a GAN state machine: DEBUG (anomaly mode on) for 3 iterations, then TRAIN turns it off
    # (--fixed) or forgets to; the first measured steps of both ran in the debug phase
    script = "a24_phase_state_machine_gan_debug_anomaly_never_off"
    assert diagnose(script).run.environment.anomaly_detection is True
    assert diagnose(script, "--fixed").run.environment.anomaly_detection is False


@pytest.mark.parametrize(
    "script",
    [
        "a06_decorator_hooks_two_tower_clear_before_step",
        "a15_closures_vae_grads_never_cleared",
        "a22_accumulation_ctx_recsys_zero_grad_condition_never_true",
    ],
)
def test_correctness_problems_in_hooks_closures_and_contexts_are_errors(script):
    assert_top_error_and_quiet_control(PLANTED6, script)


def python_loop_run(header_samples: int):
    """A run whose line profile has a `while` loop drawing pairs in Python: its one body line at
    10% of the step, its header at `header_samples` of 400 samples."""
    run = line_profiled_run()
    share = 40 / 400
    run.lines.lines = [
        LineStat(
            "train.py:44", "other", samples=40, self_samples=40, share=share, self_share=share,
            function="<module>", code="a, b = random.randrange(n), random.randrange(n)",
            loop="while len(pairs) < batch:", callees=["random.Random.randrange"],
        ),
        LineStat(
            "train.py:43", "other", samples=header_samples, self_samples=header_samples,
            share=header_samples / 400, self_share=header_samples / 400, function="<module>",
            code="while len(pairs) < batch:",
        ),
    ]  # fmt: skip
    return run


def test_a_python_loops_header_counts_with_its_body():
    # the body line alone (10%) is under the 15% an unrecognised loop needs; its header is
    # evaluated once an iteration too (another 7%): the loop is one hot spot, named by the body
    finding = only(d801.check(python_loop_run(28)), "D801")
    assert finding.details["location"] == "train.py:44"
    assert "train.py:43" in finding.details["locations"]
    assert finding.details["share"] == pytest.approx(68 / 400)
    assert d801.check(python_loop_run(0)) == []


def test_a_generator_yielding_the_batch_is_data_not_a_hot_loop():
    # batches sliced from tensors by a generator (a29's control): the yield line and its loop's
    # header are the program's data loading without a DataLoader
    run = python_loop_run(28)
    run.lines.lines[0].code = "yield x[idx], y[idx]"
    run.lines.lines[0].loop = run.lines.lines[1].code = "for idx in perm.split(batch):"
    assert d801.check(run) == []
    # the training loop's `for xb, yb in batches():` line, whose time is the generator's
    loop_line = LineStat(
        "train.py:64", "other", samples=60, self_samples=2, share=60 / 400, self_share=2 / 400,
        function="main", code="for xb, yb in batches():",
    )  # fmt: skip
    run.lines.lines[0].chain = ["train.py:64 in main"]
    run.lines.lines.append(loop_line)
    assert d801.check(run) == []


@pytest.mark.parametrize(
    "code, kind, what",
    [
        ("neg = torch.tensor(pairs).T", "from_python", "torch.tensor on a list"),
        ("seen = torch.cat([seen, xt.detach()])", "growing_cat", "everything kept so far"),
        ("self.buf = torch.cat((self.buf, x), 0)", "growing_cat", "everything kept so far"),
    ],
)
def test_recognised_tensor_building_lines_in_the_step_are_named(code, kind, what):
    run = python_loop_run(0)
    line = run.lines.lines[1]
    line.code, line.samples, line.self_samples = code, 32, 32  # 8%: enough for a named kind
    line.share = line.self_share = 32 / 400
    finding = only(d801.check(run), "D801")
    assert finding.details["kind"] == kind and finding.details["location"] == "train.py:43"
    assert what in evidence_text(finding)
    line.code = "y = torch.cat([a, b])"  # not its own result: unrecognised, under 15%
    assert d801.check(run) == []
