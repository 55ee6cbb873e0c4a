"""The HTML report of a real diagnosis: axes and units, distinct colours, memory over the steps,
the user's source lines, the sampled step's top ops, the --try table with loss curves, trace
instructions, no link or script; rendered in a real headless Chromium when one is installed.
`print(report)` is the terminal text and a notebook shows the report inline."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from torchdoctor.diagnose.report.html import render_html, write_html
from torchdoctor.diagnose.report.html_charts import COLOURS, nice_top

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from report_screenshot import browser, screenshot  # noqa: E402

LOADER_LOOP = """
import time
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset
torch.set_num_threads(1)
torch.manual_seed(0)

class Slow(Dataset):
    def __len__(self):
        return 4096
    def __getitem__(self, i):
        time.sleep(0.0003)
        return torch.randn(16), i % 2

loader = DataLoader(Slow(), batch_size=16, shuffle=True)
model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    import textwrap

    import torch

    from torchdoctor.diagnose.api import diagnose_script
    from torchdoctor.trials.report import (
        ConfigResult,
        Semantics,
        Spread,
        TrialReport,
        VariantResult,
    )

    script = tmp_path_factory.mktemp("html") / "train <&>.py"  # names are escaped
    script.write_text(textwrap.dedent(LOADER_LOOP), encoding="utf-8")
    threads = torch.get_num_threads()
    try:
        found = diagnose_script(str(script), steps=6, warmup=2)
    finally:
        torch.set_num_threads(threads)

    def config(name, losses):
        spread = Spread(0.01, 0.009, 0.011, 2)
        return ConfigResult(name, [], 2, spread, spread, spread, None, "process_rss", losses, 1.0)

    base = [2.0, 1.6, 1.3, 1.1, 1.0]
    trials = TrialReport(
        "train.py", [], 5, 2, 2, 0, "cpu", config("baseline", base),
        [VariantResult(
            config("workers", [2.0, 1.6, 1.3, 1.1, 1.0]), Spread(1.8, 1.7, 1.9, 2), 1.8, 0.05,
            Semantics("kept", 1e-6, "", 0.0, None, 5, 0.0), "faster",
        )],
    )  # fmt: skip
    found.trials = trials.to_dict()
    return found


def test_page_has_axes_memory_sources_ops_trials_and_no_links(report):
    page = render_html(report)
    assert "milliseconds per step" in page and "measured step" in page  # axis titles, units
    assert page.count("<polyline") >= 3  # memory over the steps, baseline and fix losses
    assert "MiB" in page and "at the end of each measured step" in page
    d101 = next(f for f in report.findings if f.id == "D101")
    location = d101.details["location"]
    line = int(location.rsplit(":", 1)[1])
    assert re.search(rf'class="at"><span class="n">\s*{line} </span>loader = DataLoader', page)
    assert "aten." in page and "<th>calls</th>" in page  # the sampled step's top ops
    assert "<td>workers</td><td>faster</td><td class='num'>1.80x (1.70-1.90)</td>" in page
    assert "ui.perfetto.dev" in page and "Open trace file" in page
    assert "train &lt;&amp;&gt;.py" in page and "train <&>.py" not in page
    assert not re.search(r"(src|href)\s*=|https?://|@import|url\(|<script", page)
    assert len(set(COLOURS.values())) == len(COLOURS)


def test_axis_tops_are_round_numbers():
    assert [nice_top(v) for v in (0.7, 3.2, 18.0, 45.1, 101.0)] == [1.0, 5.0, 20.0, 50.0, 200.0]


def test_print_gives_the_terminal_text_and_notebooks_the_html(report):
    text = str(report)
    assert text.startswith("torchdoctor diagnose ") and "verdict: " in text
    assert "Report(" not in text and "\x1b[" not in text
    fragment = report._repr_html_()
    assert fragment.startswith('<div class="td">') and "<html" not in fragment


@pytest.mark.skipif(browser() is None, reason="no chromium (apt-get install -y chromium)")
def test_report_renders_in_headless_chromium(report, tmp_path):
    from PIL import Image

    html, png = tmp_path / "report.html", tmp_path / "report.png"
    write_html(report, html)
    screenshot(html, png, width=1000, height=1600)
    image = Image.open(png).convert("RGB")
    assert image.size == (1000, 1600)
    colours = {colour for _, colour in image.getcolors(maxcolors=1 << 20) or []}
    drawn = [p for p, share in report.breakdown.items() if share > 0.02]
    for phase in drawn:  # every visible phase is painted in its own colour
        assert tuple(int(COLOURS[phase][i : i + 2], 16) for i in (1, 3, 5)) in colours, phase


def test_watch_report_prints_as_text_and_renders_inline():
    import torch
    from torch import nn

    import torchdoctor

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = nn.Linear(8, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(16, 8), torch.randint(0, 2, (16,))
        with torchdoctor.watch(warmup=2) as w:
            for _ in range(8):
                opt.zero_grad()
                nn.functional.cross_entropy(model(x), y).backward()
                opt.step()
    finally:
        torch.set_num_threads(threads)
    text = str(w.report)
    assert text.startswith("torchdoctor diagnose ") and f"verdict: {w.report.verdict}" in text
    fragment = w.report._repr_html_()
    assert "milliseconds per step" in fragment and "<svg" in fragment
