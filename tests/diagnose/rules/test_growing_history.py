"""D504's structural signal: a tensor among the training loop's variables rebuilt from itself
every step (a history concatenated every step) is seen by its size at the retention checks, so
a short or loaded run whose timings show only the start of the growth still names it."""

from __future__ import annotations

from planted import (
    SCRIPTS,
    line_of,
    one_thread,  # noqa: F401  (autouse fixture: one torch thread)
)
from rule_builders import only
from test_timing_noise_rules import cpu_timed

from torchdoctor.diagnose.api import diagnose_script
from torchdoctor.diagnose.observations import GrowingTensor
from torchdoctor.diagnose.probes.retention import _growing_run
from torchdoctor.diagnose.rules import d503_memory_growth as d503
from torchdoctor.diagnose.rules import d504_step_time_growth as d504

HISTORY = GrowingTensor(
    name="seen",
    first_step=4,
    last_step=16,
    first_numel=1280,
    last_numel=4352,
    bytes=34816,
    location="train.py:42",
)


def test_a_steady_growth_between_checks_is_a_history_and_a_bucketed_batch_is_not():
    # `seen = torch.cat([seen, batch])`, 256 elements per step, read at the 4th, 8th, 16th step
    assert _growing_run([(4, 1280, 0), (8, 2304, 0), (16, 4352, 0)]) is not None
    # token batches of a length-bucketed sampler, larger at each check by chance (the probe also
    # asks for the line that rebuilds the variable from itself)
    assert _growing_run([(4, 64 * 20, 0), (8, 64 * 80, 0), (16, 64 * 400, 0)]) is None
    assert _growing_run([(4, 1280, 0), (8, 2304, 0)]) is None  # two checks: too few
    assert _growing_run([(4, 1280, 0), (8, 2304, 0), (16, 2304, 0)]) is None  # stopped growing


def test_a_history_in_sight_makes_a_mild_rise_a_finding_that_names_it():
    # a rise of 1.2x over 24 timed steps with the noise of a loaded machine: not steady enough
    # for D504 alone (the last third not 1.5x the first)
    noise = [0.0004, -0.0003, 0.0001, -0.0002, 0.0003, -0.0004]
    times = [0.010 + 0.0001 * i + noise[i % 6] for i in range(24)]
    run = cpu_timed(times)
    assert d504.check(run) == []
    run.memory.growing = [HISTORY]
    finding = only(d504.check(run), "D504")
    assert finding.saving > 0 and "`seen` is rebuilt from itself at train.py:42" in " ".join(
        finding.evidence
    )
    assert finding.details["history"] == "seen" and "pieces.append" in finding.fix


def test_a_history_without_a_rise_is_named_at_info_with_no_saving():
    run = cpu_timed([0.010, 0.0102, 0.0098, 0.0101, 0.0099, 0.010] * 3)
    run.memory.growing = [HISTORY]
    finding = only(d504.check(run), "D504")
    assert finding.severity == "info" and finding.saving == 0.0
    assert "1,280 to 4,352 elements" in " ".join(finding.evidence)


def test_the_probe_finds_a_history_kept_in_an_attribute_and_its_line():
    # 16 measured steps: checks at the 4th, 8th and 16th; no what-if timing (not looked at)
    report = diagnose_script(
        str(SCRIPTS / "d504_slow_history_attribute.py"), steps=16, warmup=3, whatif=False
    )
    assert report.run.status == "stopped", report.run.error
    (history,) = report.run.memory.growing
    line = line_of("d504_slow_history_attribute", "self.seen = torch.cat(")
    assert history.name == "self.seen" and history.location.endswith(f":{line}")
    assert history.last_numel > 2 * history.first_numel
    assert "D504" in [f.id for f in report.findings]


def test_a_history_begun_in_the_warm_up_is_read_over_the_checks_it_grew_twice_over():
    # 256 elements a step since step 0, 5 warm-up steps, read at the 2nd, 4th, 8th, 16th and 20th
    # measured step: the last three alone grew 1.9x (13 -> 25 steps' worth); read back to the
    # 4th step's reading, 2.8x
    sizes = [(since, (5 + since) * 256, 0) for since in (2, 4, 8, 16, 20)]
    assert _growing_run(sizes) == (sizes[1], sizes[-1])
    assert _growing_run(sizes[2:]) is None  # not twice over: a tensor that grew once, by chance
    assert _growing_run([(2, 4096, 0), *sizes[2:]]) is None  # the 2nd step's was no smaller


def test_a_run_of_eight_steps_names_the_history_it_grows():
    # 8 measured steps: sizes read at the 2nd, 4th and 8th (the 2nd for a short run: with only
    # the 4th and 8th, a loaded run's D504 rested on 6 CPU-timed steps alone and came and went)
    report = diagnose_script(
        str(SCRIPTS / "d504_growing_history.py"), steps=8, warmup=3, whatif=False
    )
    assert report.run.status == "stopped", report.run.error
    (history,) = report.run.memory.growing
    assert history.name == "history" and history.last_numel >= 2 * history.first_numel
    assert "D504" in [f.id for f in report.findings]


def test_a_history_s_memory_growth_is_its_counted_bytes_whatever_the_process_memory_does():
    # d504_growing_history at 8 steps: 8 MiB more a step, while the process's memory (the
    # allocator returns a freed copy and takes it back) read 387, 419, 427, 387, 451, 395, 411
    # MiB: no steady rise, and D503 came in 5 runs of 8
    run = cpu_timed([0.02] * 8)
    for step, mib in zip(run.steps, (387, 419, 427, 387, 451, 395, 411, 419)):
        step.memory_bytes = mib * 2**20
    assert d503._growth(run) is None
    per_step = 128 * 256 * 64  # elements a step, float32
    run.memory.growing = [
        GrowingTensor(name="history", first_step=4, last_step=10, first_numel=5 * per_step,
                      last_numel=11 * per_step, bytes=11 * per_step * 4, location="train.py:26")
    ]  # fmt: skip
    finding = only(d503.check(run), "D503")
    assert finding.details["growth_bytes_per_step"] == per_step * 4
    assert "`history` is rebuilt from itself at train.py:26" in finding.evidence[0]
    # a history of a few numbers a step is not a memory growth to warn about
    run.memory.growing = [HISTORY]  # 1 KiB a step
    assert [f for f in d503.check(run) if f.id == "D503"] == []


NORMS = GrowingTensor(
    name="clip.history",
    first_step=4,
    last_step=16,
    first_numel=7,
    last_numel=19,
    bytes=76,
    location="train.py:28",
    container="list",
)


def test_a_list_read_whole_without_a_rise_is_named_at_info_and_is_no_memory_growth():
    run = cpu_timed([0.010, 0.0102, 0.0098, 0.0101, 0.0099, 0.010] * 3)
    run.memory.growing = [NORMS]
    finding = only(d504.check(run), "D504")
    assert finding.severity == "info" and finding.saving == 0.0
    assert finding.saving_basis == "not measured"
    evidence = " ".join(finding.evidence)
    assert "`clip.history` (a list) grew from 7 to 19 items" in evidence
    assert "read whole at train.py:28" in evidence and "deque(maxlen=" in finding.fix
    assert [f for f in d503.check(run) if f.id == "D503"] == []


def test_the_probe_finds_a_list_an_object_appends_to_and_reads_whole_every_step():
    # a helper object's list of losses whose median is taken, whole, every step; the loop's own
    # log list read once after the loop is no history, nor a deque of the last 100
    script = str(SCRIPTS / "d504_list_read_whole.py")
    report = diagnose_script(script, steps=16, warmup=3, whatif=False)
    assert report.run.status == "stopped", report.run.error
    (history,) = report.run.memory.growing
    line = line_of("d504_list_read_whole", "return min(1.0, 3.0 * float(np.median(")
    assert history.name == "guard.losses" and history.container == "list"
    assert history.location.endswith(f":{line}") and history.last_numel > 2 * history.first_numel
    assert "D504" in [f.id for f in report.findings]
    window = diagnose_script(script, ["--window"], steps=16, warmup=3, whatif=False)
    assert window.run.memory.growing == [] and "D504" not in [f.id for f in window.findings]


def test_the_probe_finds_a_tensor_a_helper_object_rebuilds_from_itself_in_its_method():
    # the loop's `monitor.preds`, rebuilt in Monitor.record (not in the loop's function)
    script = str(SCRIPTS / "d504_helper_tensor_attribute.py")
    report = diagnose_script(script, steps=8, warmup=3, whatif=False)
    assert report.run.status == "stopped", report.run.error
    (history,) = report.run.memory.growing
    line = line_of("d504_helper_tensor_attribute", "        self.preds = p if")
    assert history.name == "monitor.preds" and history.container == ""
    assert history.location.endswith(f":{line}") and "D504" in [f.id for f in report.findings]
