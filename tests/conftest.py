"""Suite-wide test settings.

Tests marked `timing` decide from what a diagnosis measured (shares of a step, sample counts,
ratios of two runs). `make test` runs them after the rest of the suite, one at a time: beside a
second test worker a tiny step's Python code and the sampler thread fight for the same two
cores, which measures the test machine's load, not the program. Each still gets two reruns
before it fails, for a machine that is busy for other reasons.
"""

from __future__ import annotations

import signal

import pytest


def pytest_configure(config: pytest.Config) -> None:
    # A suite started in the background by a non-interactive shell (`cmd &`) inherits SIGINT
    # ignored, and every program the tests run with it: a program's own Ctrl-C then does
    # nothing, plainly as under diagnose. The tests of Ctrl-C need what a terminal gives, so
    # the test processes take Python's default handler, which their children get back as the
    # default action at exec.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    config.addinivalue_line(
        "markers", "timing: a timing-based diagnosis; `make test` runs these on their own"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("timing"):
            item.add_marker(pytest.mark.flaky(reruns=2))
