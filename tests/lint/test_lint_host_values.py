"""A tensor method that returns a Python or NumPy value (`.tolist()`, `.item()`, `.numpy()`,
`.size()`) makes no tensor: rules that follow tensors through assignments stop there."""

from __future__ import annotations

from lint_helpers import lint_text

PREDICTIONS_COUNTED = """import torch

model = torch.nn.Linear(8, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
names = ["a", "b", "c", "d"]
for step in range(10):
    out = model(torch.randn(16, 8))
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    predicted = out.argmax(1){convert}
    counts = {{}}
    for i in range(len(predicted)):
        counts[names[predicted[i]]] = counts.get(names[predicted[i]], 0) + 1
"""


def test_a_loop_over_a_tolist_result_is_no_loop_over_tensor_rows():
    def lines(convert: str) -> list[int]:
        found = lint_text(PREDICTIONS_COUNTED.format(convert=convert), select="TD120").violations
        return [v.line for v in found]

    assert lines(".tolist()") == []
    assert lines(".numpy()") == []
    assert lines("") == [14]  # the tensor itself, row by row: still flagged
