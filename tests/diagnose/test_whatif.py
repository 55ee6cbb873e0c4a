"""What-if probes: they time fixes on copies of the program's own objects after the run, leave the
program's state and random streams untouched, and change the ranking where the measurement
contradicts a rule's constant."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import torch

from torchdoctor.cores import usable_cores
from torchdoctor.diagnose.api import diagnose_script, watch

SCRIPTS = Path(__file__).parent / "rules" / "scripts"
# Timing-based diagnoses: run after the rest of the suite, one at a time (tests/conftest.py).
pytestmark = [pytest.mark.timing, pytest.mark.usefixtures("one_torch_thread")]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _losses(script: str, whatif: bool):
    program = _load(script)
    loader, model, optimizer = program.build()
    # a budget the probes do not run out of on a busy machine (at 3 s the workers what-if took
    # 7 s and the later probes were skipped); the scripts' small data sets bound their time
    with watch(warmup=2, whatif=whatif, whatif_budget_s=30.0) as w:
        before = program.train(loader, model, optimizer, 12)
    after = program.train(loader, model, optimizer, 12)  # the program goes on after the probes
    return before + after, w.report.run.whatif


@pytest.mark.parametrize(
    "script, probes",
    [
        # the probes that draw random numbers: data (side loaders over the datasets: one has its
        # own generator and reads Python's and NumPy's, one seeds workers from torch's generator),
        # evaluation (dropout in train mode)
        ("whatif_keeps_program_state", {"data.workers", "data.batched_fetch",
                                        "data.persistent_workers", "evaluation.inference_mode",
                                        "evaluation.eval_mode"}),
        # replays of a model with Dropout: a float32 copy (and 2x and 4x the batch where the
        # op-overhead test of D202 holds, which another process's load can sway)
        ("whatif_compute_keeps_program_state", {"precision.float32",
                                                "precision.float32_optimizer"}),
        # a batch of 2 through 512-wide layers with Dropout, shuffled by the loader: the batch
        # what-if (planned on the measured FLOP utilisation, whatever the load). Its 2x and 4x
        # batches run in the same interleaved rounds; a row whose larger batch took under 0.8x
        # the time as run is dropped as timed through noise (batch.MIN_PLAUSIBLE_TOTAL: x2 of
        # a batch of 2 is near 1x, and at load 25 it was dropped), so either row shows both ran
        ("whatif_batch_keeps_program_state", {"batch.x2|batch.x4"}),
        # a loader built with its own batch_sampler (uneven batches from its own generator): the
        # workers what-if fetches a copy's batches (it skipped such loaders before round 9)
        ("whatif_batch_sampler_keeps_program_state", {"data.workers"}),
    ],
)  # fmt: skip
def test_program_losses_are_bit_identical_with_and_without_the_probes(script, probes):
    with_probes, measured = _losses(script, whatif=True)
    without, not_run = _losses(script, whatif=False)
    names = {t.name for t in measured.timings}
    assert all(names & set(probe.split("|")) for probe in probes), measured
    assert not_run.timings == [] and not_run.budget_s == 0
    assert with_probes == without  # exact floats: same batches, same dropout masks, same updates


def test_probes_stay_within_their_budget_and_say_what_they_skipped():
    report = diagnose_script(
        str(SCRIPTS / "d210_optimizer_loop.py"), steps=6, warmup=2, whatif_budget_s=0.0
    )
    whatif = report.run.whatif
    assert whatif.timings == [] and whatif.skipped and "budget" in whatif.skipped[0]
    assert any(note.startswith("what-if probes:") for note in report.run.notes)
    d210 = next(f for f in report.findings if f.id == "D210")
    assert d210.saving_basis == "estimated" and "assumes" in d210.saving_how


def test_optimizer_probe_measures_the_fix_and_names_the_faster_one():
    report = diagnose_script(
        str(SCRIPTS / "d210_optimizer_loop.py"), steps=6, warmup=2, whatif_budget_s=2.0
    )
    timings = {t.setting: t for t in report.run.whatif.timings if t.name.startswith("optimizer")}
    assert set(timings) == {"fused=True"}, report.run.whatif  # AdamW has a fused kernel
    fastest = min(timings.values(), key=lambda t: t.alternative_s)
    d210 = [f for f in report.findings if f.id == "D210"]
    if fastest.ratio >= 1:  # measured no faster: the constant's 2x is not claimed
        assert d210 == []
        return
    (finding,) = d210
    assert finding.saving_basis == "measured" and fastest.setting in finding.fix
    assert fastest.setting in finding.saving_how and "Measured:" in " ".join(finding.evidence)


def test_optimizer_probe_times_the_steps_under_the_programs_profiler_with_a_reference():
    """The program ran its steps under torch.profiler (record_shapes): the clone's steps, and
    the replay's forward and backward (the reference for the step without our probes), are
    timed under one too, as `--try fused_optimizer` runs them; no profiler is left recording."""
    report = diagnose_script(
        str(SCRIPTS / "d212_profiler_left_on.py"), steps=6, warmup=2, whatif_budget_s=30.0
    )
    timings = {t.name: t for t in report.run.whatif.timings}
    assert {"optimizer.fused", "copy.forward_backward", "profiler.off"} <= set(timings)
    for name in ("optimizer.fused", "copy.forward_backward"):
        assert timings[name].setting.endswith("under the program's torch.profiler"), timings
    reference = timings["copy.forward_backward"]
    assert reference.repeats == timings["optimizer.fused"].repeats  # in the same rounds
    assert not torch.autograd._profiler_enabled()


def test_whole_cycle_mode_reaches_the_per_epoch_evaluation_that_20_steps_miss():
    script = str(SCRIPTS / "epoch_eval_with_autograd.py")
    fixed = diagnose_script(script, steps=20, warmup=3, whatif=False)
    assert fixed.run.evaluation.forwards == 0 and "D301" not in [f.id for f in fixed.findings]
    cycle = diagnose_script(script, steps=None, warmup=3, whatif_budget_s=2.0)
    assert cycle.run.status == "stopped" and len(cycle.run.steps) > 20
    assert any("a whole cycle was measured" in note for note in cycle.run.notes)
    d301 = next(f for f in cycle.findings if f.id == "D301")
    assert d301.saving_basis == "measured" and d301.seconds_per_epoch is not None
    timing = next(t for t in cycle.run.whatif.timings if t.name == "evaluation.inference_mode")
    assert timing.as_run_s > 0 and timing.alternative_s > 0


def _timing(report, name: str):
    found = [t for t in report.run.whatif.timings if t.name == name]
    assert found, report.run.whatif
    return found


def test_workers_probe_runs_the_whole_step_beside_the_workers_not_forward_backward_alone():
    # Adam over a large embedding is most of the step: a replay of forward and backward alone
    # (the step as the probe timed it before) is a third of the step, and hid a third of the
    # data wait that workers hide behind the optimizer
    report = diagnose_script(
        str(SCRIPTS / "whatif_workers_beside_long_optimizer.py"),
        steps=8,
        warmup=3,
        whatif_budget_s=30.0,  # at 3 s the optimizer probe overran it under load: no workers
    )
    steps = sorted(s.wall_s for s in report.run.steps)
    median_step_s = steps[len(steps) // 2]
    (as_run,) = {t.as_run_s for t in _timing(report, "data.workers")}
    assert as_run > 0.7 * median_step_s, (as_run, median_step_s)
    settings = {t.setting for t in _timing(report, "data.workers")}
    # the most workers whose head start (2 batches each) leaves 4 of the script's 12 batches to
    # time: 3, or fewer on a machine with fewer cores (as `--try workers` starts, at most 8)
    assert f"num_workers={min(3, usable_cores())}" in settings, settings
    d101 = [f for f in report.findings if f.id == "D101"]
    if d101:  # measured faster on this machine: the claim is the measurement, at most the wait
        assert d101[0].saving_basis == "measured"
        assert d101[0].saving <= report.breakdown["data"] + 1e-9


def test_batched_fetch_and_worker_start_up_are_measured_on_the_planted_scripts():
    d108 = diagnose_script(
        str(SCRIPTS / "d108_tensordataset_fetch.py"), steps=8, warmup=3, whatif_budget_s=30.0
    )
    (fetch,) = _timing(d108, "data.batched_fetch")
    finding = next(f for f in d108.findings if f.id == "D108")
    assert fetch.ratio < 1 and finding.saving_basis == "measured", finding.saving_how
    share = finding.details["data_s"] / finding.details["step_s"]
    # the measured share of the fetch replaces the constant four fifths
    assert finding.saving == pytest.approx(share * (1 - fetch.ratio), rel=0.02)

    d103 = diagnose_script(
        str(SCRIPTS / "d103_workers_respawned.py"),
        steps=8,
        warmup=3,
        whatif_budget_s=30.0,  # a hard limit now: at load 10 three epoch starts took 1.3-1.8 s
    )
    (start,) = _timing(d103, "data.persistent_workers")
    finding = next(f for f in d103.findings if f.id == "D103")
    assert start.alternative_s < start.as_run_s and finding.saving_basis == "measured"
    assert "Measured:" in " ".join(finding.evidence)


def test_batched_fetch_times_the_loader_whose_dataset_takes_a_list_of_indices():
    script = SCRIPTS / "whatif_batched_fetch_two_loaders.py"
    # the workers what-if on the other loader ran 5 s of a 3 s budget under load and left none
    # for this one: a budget it cannot run out of (its 8192 samples bound the workers' timing)
    report = diagnose_script(str(script), steps=8, warmup=2, whatif_budget_s=30.0)
    timed = [t for t in report.run.whatif.timings if t.name == "data.batched_fetch"]
    assert len(timed) == 1, report.run.whatif
    # the TensorDataset loader (line 25), not the longer-waiting one whose __getitem__ takes an int
    assert timed[0].subject.endswith(f"{script.name}:25"), timed[0]
    rows = next((ld for ld in report.run.loaders if ld.location.endswith(":24")), None)
    assert rows is not None and rows.wait_s > 0
    # D108 about the int-indexed loader (whether it counts as in memory is a timing near a
    # threshold) never borrows the other loader's measurement
    about_rows = [
        f
        for f in report.findings
        if f.id == "D108" and any(f"{script.name}:24" in line for line in f.evidence)
    ]
    assert all(f.saving_basis == "estimated" for f in about_rows), about_rows


# D111 needs the collate at 25% of the step: a share, not a time (a timing test: module mark)
def test_collate_probe_times_a_whole_batch_collate_that_returns_the_same_batches():
    """The program pads one token at a time; default_collate cannot stack ragged sequences, one
    pad_sequence returns the very same batches: that is timed, and D111's saving is the
    measured share instead of the constant's "three trivial ops per sample"."""
    with_probes, measured = _losses("whatif_collate_keeps_program_state", whatif=True)
    without, _ = _losses("whatif_collate_keeps_program_state", whatif=False)
    assert with_probes == without  # the side loader's samples drew from copies of the streams
    (collate,) = [t for t in measured.timings if t.name == "data.collate"]
    assert "pad_sequence" in collate.setting and collate.ratio < 1, collate

    report = diagnose_script(str(SCRIPTS / "d111_slow_collate.py"), steps=6, warmup=2,
                             whatif_budget_s=2.0)  # fmt: skip
    (timing,) = [t for t in report.run.whatif.timings if t.name == "data.collate"]
    finding = next(f for f in report.findings if f.id == "D111")
    assert finding.saving_basis == "measured" and "pad_sequence" in finding.saving_how
    assert timing.subject == finding.details["location"]  # timed on the loader D111 names
    # the measured share of the collate time replaces the constant
    share = finding.details["collate_share"]
    assert finding.saving == pytest.approx(share * (1 - timing.ratio), rel=0.02)


def test_collate_probe_claims_nothing_when_no_whole_batch_collate_returns_the_same_batches():
    from torch.utils.data import DataLoader

    from torchdoctor.diagnose.whatif import collate

    def shifted(samples):  # pads with -1: neither candidate builds this batch
        return torch.nn.utils.rnn.pad_sequence(samples, batch_first=True, padding_value=-1)

    data = [torch.arange(n) for n in (3, 5, 4, 2)] * 4
    assert collate.measure(DataLoader(data, batch_size=4, collate_fn=shifted), 0.2) == []
    timed = collate.measure(DataLoader(data, batch_size=4, collate_fn=collate.padded_collate), 0.2)
    assert [t.setting for t in timed] == [collate.CANDIDATES[1][0]]  # the same batches: timed


def test_profiler_probe_states_the_median_of_its_pairs_ratios(monkeypatch):
    """Pairs of blocks (profiler on, off) in ABBA order, each pair back to back; the stated
    ratio is the median over the pairs' ratios, so one block slowed as a whole (the machine's
    load rose during it) moves one pair's ratio, not the stated one. The blocks run the real
    work on a real model under the real profiler; their times are set by the test: profiled
    calls 1.25x the plain ones, the second pair's plain block three times slower."""
    from torchdoctor.diagnose.whatif import profiler
    from torchdoctor.diagnose.whatif.replay import Replay

    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    replay = Replay(model, (torch.randn(4, 8),), {}, "cpu")
    real_block = profiler._block
    blocks: list[bool] = []

    def block(work, device_type, calls, settings):
        real_block(work, device_type, calls, settings)  # the real work, profiler on or off
        blocks.append(settings is not None)
        slow = 3.0 if len(blocks) == 3 else 1.0  # the second pair's first block: off
        return [(0.00125 if settings is not None else 0.001 * slow)] * calls

    monkeypatch.setattr(profiler, "_block", block)
    (timing,) = profiler.measure_profiler(replay, [], 0.05)
    # on-off, off-on, on-off; where the pairs disagree and room is left, two more pairs follow
    # (round 14), and the ABBA order goes on
    assert blocks[:6] == [True, False, False, True, True, False]
    assert blocks[6:] in ([], [False, True, True, False])
    assert timing.ratio == pytest.approx(0.8)
    assert not torch.autograd._profiler_enabled()


def test_evaluation_probe_times_forwards_of_the_evaluations_batch_several_to_a_call():
    """d301 trains on 128 rows and validates on 256: the autograd what-if times a copy's forward
    on 256 rows (a fix's gain depends on the batch), short forwards several to a timed call (a
    few hundred microseconds timed alone swung 0.8-1.3x between runs at load)."""
    from torchdoctor.diagnose.whatif.evaluation import calls_per_timing
    from torchdoctor.diagnose.whatif.replay import Replay

    report = diagnose_script(
        str(SCRIPTS / "d301_eval_with_autograd.py"), steps=6, warmup=2, whatif_budget_s=3.0
    )
    assert report.run.evaluation.batch_size == 256
    timing = next(t for t in report.run.whatif.timings if t.name == "evaluation.inference_mode")
    assert timing.unit == "evaluation forward" and timing.repeats >= 3, report.run.whatif
    d301 = next(f for f in report.findings if f.id == "D301")
    assert d301.saving_basis == "measured", report.run.whatif
    tiny = Replay(torch.nn.Linear(4, 2), (torch.randn(4, 4),), {}, "cpu")
    assert calls_per_timing(tiny.forward, "cpu") > 1  # microseconds: many to a call


def test_profiler_probe_adds_pairs_where_the_first_disagree_and_one_outlier_does_not_undo_them(
    monkeypatch,
):
    """d212 at load 3: pairs of 0.41x, 0.7x and 1.36x decided nothing and the finding fell back
    to its estimate (90% against 28-38% that `--try profiler_off` gained). Where the first
    pairs disagree two more are timed, and of five pairs the lowest and highest are left out
    of where they lie: one pair whose block another process slowed does not undo four that
    agree. The blocks run the real work under the real profiler; their times are set."""
    from torchdoctor.diagnose.whatif import profiler
    from torchdoctor.diagnose.whatif.replay import Replay

    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    replay = Replay(model, (torch.randn(4, 8),), {}, "cpu")
    real_block = profiler._block
    # the process's first profiler start (seconds: kineto's set-up) would size no more pairs
    real_block(replay.forward_backward, "cpu", 1, profiler.profiler_arguments([], "cpu"))
    blocks: list[bool] = []

    def block(work, device_type, calls, settings):
        real_block(work, device_type, calls, settings)
        blocks.append(settings is not None)
        faster = 0.5 if len(blocks) == 4 else 1.0  # the second pair: its profiled block faster
        return [(0.0015 * faster if settings is not None else 0.001)] * calls

    monkeypatch.setattr(profiler, "_block", block)
    # a generous allowance: the calls per block stop at MAX_CALLS, and the more pairs must fit
    # in it beside a busy machine's slow profiler starts
    (timing,) = profiler.measure_profiler(replay, [], 30.0)
    assert len(blocks) == 2 * (profiler.PAIRS + profiler.MORE_PAIRS)
    low, high = timing.pair_ratios
    assert high < 1 and timing.ratio == pytest.approx(1 / 1.5)
    blocks.clear()  # pairs that agree from the first: no more are timed
    monkeypatch.setattr(
        profiler, "_block", lambda w, d, calls, s: blocks.append(s is not None) or [0.001] * calls
    )
    (free,) = profiler.measure_profiler(replay, [], 30.0)
    assert len(blocks) == 2 * profiler.PAIRS and free.pair_ratios == (1.0, 1.0)
