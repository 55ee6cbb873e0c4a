"""A Python loop inside a custom autograd Function's backward is the program's Python loop: its
torch calls run inside backward(), where the Python-call counter used to be off, so D203 took
the ops for a recurrent module's C++ loop and stayed silent."""

from __future__ import annotations

import torch
from planted import (
    diagnose,
    one_thread,  # noqa: F401  (autouse fixture: one torch thread)
)


def test_a_row_loop_in_a_custom_backward_is_counted_and_named():
    report = diagnose("d203_custom_function_backward_loop", steps=6)
    compute = report.run.compute
    # 128 rows, a handful of torch calls per row, all inside backward()
    assert compute.python_calls_per_step > 4 * 128
    assert "D203" in [f.id for f in report.findings]
    # the counter's hook on custom backwards is gone with the session
    assert torch.autograd.function.BackwardCFunction.apply.__module__ == "torch.autograd.function"
