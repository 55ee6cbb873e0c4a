"""Fix layouts: a keyword added to a call keeps the call's own layout."""

from __future__ import annotations

import pytest
from lint_helpers import lint_text

PREFIX = (
    "import torch\nfrom torch.utils.data import DataLoader\n"
    "loader = DataLoader(ds, num_workers=2, pin_memory=True)\nfor x, y in loader:\n"
)


@pytest.mark.parametrize(
    "before, after",
    [
        ("    x = x.cuda()\n", "    x = x.cuda(non_blocking=True)\n"),
        ("    x = x.to('cuda')\n", "    x = x.to('cuda', non_blocking=True)\n"),
        (
            "    x = x.to(\n        'cuda'\n    )\n",
            "    x = x.to(\n        'cuda',\n        non_blocking=True\n    )\n",
        ),
        (
            "    x = x.to(\n        'cuda',\n    )\n",
            "    x = x.to(\n        'cuda',\n        non_blocking=True,\n    )\n",
        ),
        (
            "    x = x.to('cuda',\n             dtype=torch.half)  # half\n",
            "    x = x.to('cuda',\n             dtype=torch.half, non_blocking=True)  # half\n",
        ),
    ],
)
def test_add_keyword_layouts(before, after):
    fixed = lint_text(PREFIX + before, select="TD104", fix=True)
    assert fixed.fixed_source == PREFIX + after


def test_remove_argument_keeps_others():
    source = "opt.zero_grad(set_to_none=False)\nopt2.zero_grad(set_to_none=False, )\n"
    fixed = lint_text("import torch\n" + source, select="TD122", fix=True, unsafe=True).fixed_source
    assert fixed == "import torch\nopt.zero_grad()\nopt2.zero_grad()\n"
