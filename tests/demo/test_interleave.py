"""Rows run interleaved epoch by epoch, one at a time, each keeping its own state."""

from __future__ import annotations

import threading
import time

import pytest
import torch

from torchdoctor.demo.interleave import run_interleaved

CPU = torch.device("cpu")


def test_rows_take_turns_one_epoch_each_and_get_their_epoch_times():
    log, running = [], []

    def program(name, epochs, seconds):
        def run(baton):
            state = 0  # lives across this row's epochs, as a model would
            for epoch in range(epochs):
                baton.epoch_start()
                running.append(name)
                assert len(running) == 1, running  # never two rows at once
                log.append((name, epoch))
                time.sleep(seconds)
                state += 1
                running.remove(name)
            return name, state, threading.current_thread().name

        return run

    outcomes = run_interleaved([program("a", 3, 0.02), program("b", 3, 0.05)], CPU)
    assert log == [("a", 0), ("b", 0), ("a", 1), ("b", 1), ("a", 2), ("b", 2)]
    (a, wall_a, _), (b, wall_b, _) = outcomes
    assert a.result[:2] == ("a", 3) and b.result[:2] == ("b", 3)
    assert a.result[2] != threading.current_thread().name  # ran in its own thread
    assert len(a.times) == len(b.times) == 3
    assert all(0.02 <= t < 0.5 for t in a.times) and all(0.05 <= t < 0.5 for t in b.times)
    assert wall_a >= sum(a.times) and wall_b >= sum(b.times)


def test_a_row_with_fewer_epochs_simply_finishes_early():
    def program(epochs):
        def run(baton):
            for _ in range(epochs):
                baton.epoch_start()
            return epochs

        return run

    outcomes = run_interleaved([program(1), program(3)], CPU)
    assert [baton.result for baton, _, _ in outcomes] == [1, 3]
    assert [len(baton.times) for baton, _, _ in outcomes] == [1, 3]


def test_an_error_in_a_row_reaches_the_caller():
    def broken(baton):
        baton.epoch_start()
        raise ValueError("row exploded")

    with pytest.raises(ValueError, match="row exploded"):
        run_interleaved([broken], CPU)
