"""D503's loss terms: every fresh scalar with a graph among the loop's variables is watched, not
only the first, so a helper that keeps the second term (a KL or penalty term adapted from
every value so far) with its graph is found; its control keeping floats is not."""

from __future__ import annotations

from planted import (
    SCRIPTS,
    line_of,
    one_thread,  # noqa: F401  (autouse fixture: one torch thread)
)

from torchdoctor.diagnose.api import diagnose_script


def test_a_helper_keeping_the_second_loss_term_with_its_graph_is_found():
    script = str(SCRIPTS / "d503_second_term_kept.py")
    # 16 measured steps: checks at the 4th, 8th and 16th; no what-if timing (not looked at)
    report = diagnose_script(script, steps=16, warmup=3, whatif=False)
    assert report.run.status == "stopped", report.run.error
    (kept,) = report.run.memory.retained
    assert kept.kind == "term" and kept.with_graph and "`weights.seen`" in kept.holder
    assert kept.location.endswith(f":{line_of('d503_second_term_kept', 'loss.backward()')}")
    assert "D503" in [f.id for f in report.findings]
    fixed = diagnose_script(script, ["--fixed"], steps=16, warmup=3, whatif=False)
    assert fixed.run.memory.retained == [] and "D503" not in [f.id for f in fixed.findings]
