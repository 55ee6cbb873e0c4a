"""bench/lint_precision.py matches labels to findings by the text of the finding's line, so a
change that shifts lines does not re-label findings (round 12 keyed them by line and column)."""

from __future__ import annotations

import importlib.util

from lint_helpers import REPO


def _bench():
    spec = importlib.util.spec_from_file_location(
        "lint_precision", REPO / "bench/lint_precision.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_label_follows_its_line_when_lines_shift(tmp_path):
    bench = _bench()
    source = "import torch\n\n\nstate = torch.load(path)\nstate = torch.load(path)\n"
    (tmp_path / "o+r").mkdir()
    (tmp_path / "o+r" / "t.py").write_text(source)
    text = bench.source_line(tmp_path, "o/r", "t.py:4:9")
    assert text == "state = torch.load(path)"
    labels = bench.keyed(
        [("o/r", "t.py:4:9", "TD110", text, "first"), ("o/r", "t.py:5:9", "TD110", text, "second")]
    )
    shifted = bench.keyed(
        [("o/r", "t.py:6:9", "TD110", text, "a"), ("o/r", "t.py:7:9", "TD110", text, "b")]
    )
    assert set(labels) == set(shifted)  # two findings on equal lines: two keys, both matched
    assert [labels[k] for k in sorted(labels)] == ["first", "second"]
