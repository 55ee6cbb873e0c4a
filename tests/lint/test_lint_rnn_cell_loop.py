"""TD135: a recurrent cell stepped in Python over a sequence the program already holds (the
planted d203_rnn_cell_loop and s19 forms), next to decoding loops fed their own output, which
the fused layer cannot run."""

from __future__ import annotations

from lint_helpers import lint_text

CELL_OVER_SEQUENCE = """import torch
from torch import nn


class Sequence(nn.Module):
    def __init__(self, fused):
        super().__init__()
        self.cell = nn.LSTM(1, 16) if fused else nn.LSTMCell(1, 16)
        self.gru = nn.GRUCell(16, 16)
        self.head = nn.Linear(16, 1)

    def forward(self, series, steps):
        h = c = series.new_zeros(series.size(0), 16)
        outputs = []
        for value in series.split(1, dim=1):
            h, c = self.cell(value, (h, c))
            outputs.append(self.head(h))
        for t in range(series.shape[1]):
            h = self.gru(self.head.weight * series[:, t, None], h)
        out = outputs[-1]
        for t in range(steps.size(0)):
            h, c = self.cell(out, (h, c))
            out = self.head(h)
        return torch.cat(outputs, dim=1)
"""


def test_cells_stepped_over_a_held_sequence_are_flagged_not_decoding():
    found = lint_text(CELL_OVER_SEQUENCE, select="TD135").violations
    assert [v.line for v in found] == [15, 18]
    assert "`nn.LSTMCell`" in found[0].message and "`nn.LSTM`" in found[0].message
    # windows of several steps (`split(4)`) are not single steps
    windows = CELL_OVER_SEQUENCE.replace("series.split(1, dim=1)", "series.split(4, dim=1)")
    assert [v.line for v in lint_text(windows, select="TD135").violations] == [18]
