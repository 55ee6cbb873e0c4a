"""Step 2 of the demo: `torchdoctor diagnose` on the unmodified naive script, its whole epoch.

The whole epoch, not a few steps: the what-if probes get 10% of the diagnosed time, and after 15
steps (0.2-0.4 s) the DataLoader workers' side runs did not fit, so D101 stated an estimate
("the wait would drop to about 0 ms") that the demo's own table then measured false on 2 cores
(1 worker 0.84x). `--diagnose-steps N` bounds it.

The diagnosis is shown, not relied on: if it cannot run, the demo says so in one line and goes
on to measure the treated loop.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from typing import Any

from torchdoctor.demo.workload import Workload
from torchdoctor.program import Program

SCRIPT_MODULE = "torchdoctor.demo.naive_loop"


def unavailable(reason: str) -> dict[str, Any]:
    return {"available": False, "error": reason, "verdict": None, "findings": []}


def diagnose_naive(workload: Workload, steps: int | None, console) -> dict[str, Any]:
    """Diagnose `python -m torchdoctor.demo.naive_loop` on the workload's data; print the report."""
    from torchdoctor.diagnose.api import diagnose_script

    args = workload.naive_script_args(epochs=1)
    bound = f" --steps {steps}" if steps is not None else ""
    console.print(
        f"$ torchdoctor diagnose -m {SCRIPT_MODULE} {' '.join(args)}{bound}", markup=False
    )
    try:
        # The script's own epoch lines would interleave with the report: keep them out. runpy
        # warns that the module is already imported (the demo uses its Dataset): expected here.
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.filterwarnings(
                "ignore", message=".*found in sys.modules", category=RuntimeWarning
            )
            program = Program(SCRIPT_MODULE, args, module=True)
            report = diagnose_script(program, steps=steps, warmup=3, quiet=True)
    except Exception as exc:  # noqa: BLE001 - any failure of the side show is reported, not fatal
        reason = f"{type(exc).__name__}: {exc}"
        console.print(f"diagnosis unavailable: {reason}", markup=False)
        return unavailable(reason)
    try:
        summary = {
            "available": True,
            "error": None,
            "verdict": report.verdict,
            "findings": [
                {"id": f.id, "title": f.title, "severity": f.severity, "saving": f.saving}
                for f in report.findings
            ],
        }
    except Exception as exc:  # noqa: BLE001 - a report we cannot read is reported, not fatal
        reason = f"{type(exc).__name__}: {exc}"
        console.print(f"diagnosis unavailable: {reason}", markup=False)
        return unavailable(reason)
    _render(report, summary, console)
    return summary


def _render(report, summary: dict[str, Any], console) -> None:
    """The diagnose terminal report; if that renderer fails, the findings as plain lines."""
    try:
        from torchdoctor.diagnose.report.terminal import render_terminal

        render_terminal(report, console)
        return
    except Exception as exc:  # noqa: BLE001 - fall back to what we already read
        console.print(
            f"(diagnose report renderer failed: {type(exc).__name__}: {exc})", markup=False
        )
    for finding in summary["findings"][:5]:
        console.print(
            f"{finding['id']} {finding['title']} "
            f"(saves ~{100 * finding['saving']:.0f}% of step time)",
            markup=False,
        )
    console.print(f"verdict: {summary['verdict']}", markup=False)
