"""The line sampler's rate and raw samples: full rate for the first FULL_RATE_SAMPLES, slower
after (its cost per second falls on a long run); lines read from instruction offsets after the
run agree with `f_lineno`; samples taken at different rates still add up to the time they stand
for. Real threads, real frames, a real watched loop."""

import os
import sys
import tempfile
import threading
import time

import pytest
import torch
from torch import nn

import torchdoctor
from torchdoctor.diagnose.line_profile import build_lines
from torchdoctor.diagnose.probes import lines
from torchdoctor.diagnose.probes.lines import (
    INTERVAL_S,
    LineSampler,
    is_user_file,
    line_at,
    sampling_interval,
)


def test_sampler_keeps_the_full_rate_for_its_budget_then_waits_longer(monkeypatch):
    monkeypatch.setattr(lines, "FULL_RATE_SAMPLES", 8)
    model = nn.Linear(16, 16)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(8, 16)
    with torchdoctor.watch(warmup=2, whatif=False) as watch:
        sampler = next(p for p in watch.session.probes if isinstance(p, LineSampler))
        deadline = time.monotonic() + 60  # a starved sampler on a loaded machine: fail, not hang
        while len(sampler.samples) < 24 and time.monotonic() < deadline:
            loss = model(x).square().mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        samples = list(sampler.samples)
    assert len(samples) >= 24, len(samples)
    waited = [s[-1] for s in samples]
    # decided by the count kept, never by a clock: the n-th sample waited sampling_interval(n - 1)
    assert waited[:9] == [INTERVAL_S] * 9
    assert waited[:24] == [sampling_interval(n) for n in range(24)]
    assert waited[23] == pytest.approx(INTERVAL_S * 23 / 8)
    # each wait really happened (Event.wait never returns early by more than clock rounding)
    gaps = [b[0] - a[0] for a, b in zip(samples, samples[1:])]
    assert all(gap >= wait - 5e-4 for gap, wait in zip(gaps, waited[1:])), (gaps, waited)
    assert watch.report.run.lines.samples > 0 and watch.report.run.lines.lines


def test_line_read_from_the_instruction_offset_is_f_lineno_on_a_sampled_stack():
    main = threading.get_ident()
    stop = threading.Event()
    pairs = []

    def sample() -> None:
        while not stop.wait(0.001) and len(pairs) < 3000:
            frame = sys._current_frames().get(main)
            while frame is not None:
                pairs.append((frame.f_lineno, frame.f_code, frame.f_lasti))
                frame = frame.f_back

    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU())
    thread = threading.Thread(target=sample)
    thread.start()
    try:
        while thread.is_alive() and len(pairs) < 3000:
            total = sum(i * i for i in range(200))  # Python lines between the torch ops
            model(torch.randn(4, 8)).sum().backward()
    finally:
        stop.set()
        thread.join()
    assert total and len(pairs) >= 100
    assert [line_at(code, offset) for _, code, offset in pairs] == [
        line or code.co_firstlineno for line, code, _ in pairs
    ]


def _two_lines():
    def fast_sampled():
        return sys._getframe()

    def slow_sampled():
        return sys._getframe()

    return fast_sampled(), slow_sampled()


def test_samples_taken_at_different_rates_stand_for_the_time_between_them():
    fast, slow = _two_lines()
    # 0.3 s on one line sampled every 3 ms, then 0.3 s on another sampled every 60 ms (a sampler
    # that slowed down on a long run): each line is half the time
    samples = [(0.003 * i, "other", ((fast.f_code, fast.f_lineno),), (), 0.003)
               for i in range(1, 101)]  # fmt: skip
    samples += [(0.3 + 0.06 * i, "other", ((slow.f_code, slow.f_lineno),), (), 0.06)
                for i in range(1, 6)]  # fmt: skip
    profile = build_lines(samples, origin=0.0, windows=[(0.0, 0.6, 0.6)], evaluation=[],
                          interval_s=INTERVAL_S)  # fmt: skip
    share = {line.function.rpartition(".")[2]: line.self_share for line in profile.lines}
    assert share["fast_sampled"] == pytest.approx(0.5, abs=0.02)
    assert share["slow_sampled"] == pytest.approx(0.5, abs=0.02)
    assert profile.samples == 105


def test_code_torch_compile_generated_is_not_the_programs(tmp_path, monkeypatch):
    # seen on a compiled MLP: inductor's generated `extern_kernels.mm(...)` was a "top line"
    default = os.path.join(tempfile.gettempdir(), "torchinductor_someone", "pm", "cpmzn.py")
    assert not is_user_file(default)
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "cache"))
    assert not is_user_file(str(tmp_path / "cache" / "ab" / "cabc.py"))
    assert is_user_file(str(tmp_path / "train.py"))


def _here(depth: int = 1) -> tuple:
    frame = sys._getframe(depth)
    return frame.f_code, frame.f_lineno


def _line_with_a_generator_expression() -> tuple:
    """(code, line) of the function's own frame and of a generator expression's frame, on one
    line. Generator expressions, not list comprehensions: since Python 3.12 (PEP 709) a list
    comprehension runs in its function's own frame."""
    own = list(_here(2) for _ in range(1)); generator = list(_here(1) for _ in range(1))  # noqa: E702  # fmt: skip
    return own, generator


def test_a_line_running_in_a_generator_expressions_frame_too_is_one_line():
    # `sum(f(x) for x in xs)` runs in two frames on one line: sampled in both, it was two line
    # stats (D801 named it twice: "26% of every step" and "58% ... in 3 of the 24 steps")
    (outer,), (inner,) = _line_with_a_generator_expression()
    assert inner[0].co_name.startswith("<") and not outer[0].co_name.startswith("<")
    assert inner[0] is not outer[0] and inner[1] == outer[1], (inner, outer)
    samples = [(0.01 * i, "other", (inner, outer), (), 0.01) for i in range(1, 31)]
    samples += [(0.3 + 0.01 * i, "other", (outer,), (), 0.01) for i in range(1, 31)]
    profile = build_lines(samples, origin=0.0, windows=[(0.0, 0.6, 0.6)], evaluation=[],
                          interval_s=INTERVAL_S)  # fmt: skip
    (line,) = profile.lines
    assert (line.samples, line.self_samples) == (60, 60)
    assert line.self_share == pytest.approx(1.0, abs=0.02)
    assert line.function.endswith("_line_with_a_generator_expression")


def test_the_phase_listener_leaves_a_short_steps_path_after_a_few_steps_that_repeat_it():
    """A step of four training transitions (forward, zero_grad, backward, step) repeats its call
    paths from its second step: the listener walked the stack at each transition until 48 had
    repeated (twelve steps, half of the default 20 measured ones); it leaves after SETTLED_STEPS
    whole steps of repeats (the second step's repeats begin the count)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(4, 8), torch.randn(4, 1)
    watch = torchdoctor.watch(warmup=3, steps=20, whatif=False)
    listening = []
    with watch:
        tracker = watch.session.tracker
        sampler = next(p for p in watch.session.probes if isinstance(p, LineSampler))
        for _ in range(12):
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            listening.append(sampler._phase_started in tracker.phase_listeners)
    # steps 0-4 listen (0: the paths are new; 1: the repeats begin; 2-4 repeat whole), no more
    assert listening == [True] * 5 + [False] * 7
    assert sampler.training_callers  # the loop's lines were recorded before it left
