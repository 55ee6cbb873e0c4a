"""Names are resolved through imports and aliases, never by spelling."""

from __future__ import annotations

import pytest
from lint_helpers import codes, lint_text


@pytest.mark.parametrize(
    "source",
    [
        "import torch as T\nm = T.nn.DataParallel(net)\n",
        "from torch import nn\nm = nn.DataParallel(net)\n",
        "import torch.nn as tnn\nm = tnn.DataParallel(net)\n",
        "from torch.nn import DataParallel as DP\nm = DP(net)\n",
        "from torch.nn.parallel import DataParallel\nm = DataParallel(net)\n",
    ],
)
def test_aliases_resolve(source):
    assert codes(lint_text(source, select="TD118")) == ["TD118"]


@pytest.mark.parametrize(
    "source",
    [
        "m = nn.DataParallel(net)\n",  # `nn` never imported: not torch's
        "import mylib as nn\nm = nn.DataParallel(net)\n",
        "class DataParallel:\n    pass\nm = DataParallel(net)\n",
        "import torch\ndef f(torch):\n    return torch.nn.DataParallel(net)\n",  # shadowed by a parameter
    ],
)
def test_same_spelling_other_object(source):
    assert codes(lint_text(source, select="TD118")) == []


def test_dataloader_alias_and_module_path():
    source = (
        "import torch.utils.data as tud\n"
        "from torch.utils.data import DataLoader as DL\n"
        "from torch.utils.data.dataloader import DataLoader\n"
        "import torchvision\nds = torchvision.datasets.ImageFolder('data')\n"
        "a = tud.DataLoader(ds)\nb = DL(ds)\nc = DataLoader(ds)\n"
    )
    assert [v.line for v in lint_text(source, select="TD102").violations] == [6, 7, 8]


def test_fix_uses_the_files_alias():
    source = "import torch as T\nwith T.cuda.amp.autocast():\n    pass\n"
    assert lint_text(source, select="TD115", fix=True).fixed_source == (
        'import torch as T\nwith T.amp.autocast("cuda"):\n    pass\n'
    )


def test_fix_keeps_comments_and_layout():
    source = (
        "import torch\n\n# load weights\nm.load_state_dict(torch.load(  # from disk\n"
        "    path,\n    map_location='cpu',\n))\n"
    )
    fixed = lint_text(source, select="TD111", fix=True, unsafe=True).fixed_source
    assert fixed == (
        "import torch\n\n# load weights\nm.load_state_dict(torch.load(  # from disk\n"
        "    path,\n    map_location='cpu',\n    weights_only=True,\n))\n"
    )


def test_fix_after_dotted_import_uses_torch():
    source = "import torch.cuda.amp\nscaler = torch.cuda.amp.GradScaler()\n"
    assert lint_text(source, select="TD115", fix=True).fixed_source == (
        'import torch.cuda.amp\nscaler = torch.amp.GradScaler("cuda")\n'
    )


def test_no_fix_without_a_torch_binding():
    source = "from torch.cuda.amp import GradScaler\nscaler = GradScaler()\n"
    result = lint_text(source, select="TD115", fix=True)
    assert [(v.line, v.code) for v in result.violations] == [(1, "TD115"), (2, "TD115")]
    assert not result.changed
