"""TD136: an optimizer built with `foreach=False`, written the ways planted and real scripts do."""

from __future__ import annotations

from lint_helpers import codes, lint_text

CONFIG_DATACLASS = """from dataclasses import dataclass, field

import torch
from torch import nn


@dataclass
class Config:
    optimizer_kwargs: dict = field(
        default_factory=lambda: {"lr": 1e-3, "weight_decay": 0.01, "foreach": False}
    )


def build(model, cfg):
    return getattr(torch.optim, "AdamW")(model.parameters(), **cfg.optimizer_kwargs)
"""


def test_foreach_off_in_a_config_dict_and_a_helper_are_flagged():
    assert codes(lint_text(CONFIG_DATACLASS, select="TD136")) == ["TD136"]
    helper = (
        "import torch\n\n\ndef make_optimizer(params, foreach=True):\n"
        "    return torch.optim.SGD(params, lr=0.1, foreach=foreach)\n\n\n"
        "opt = make_optimizer([torch.zeros(2, requires_grad=True)], foreach=False)\n"
    )
    # once, at the call that passes False: the constructor only passes the helper's own
    # parameter on
    assert [v.line for v in lint_text(helper, select="TD136").violations] == [8]


def test_a_helper_passing_its_own_foreach_on_is_reported_once_where_it_is_decided():
    helpers = (
        "import torch\n\n\ndef build(params, lr, foreach):\n"
        "    return torch.optim.AdamW(params, lr=lr, foreach=foreach)\n\n\n"
        "def build_default(params, foreach=False):\n"
        "    return torch.optim.AdamW(params, foreach=foreach)\n\n\n"
        "w = [torch.zeros(2, requires_grad=True)]\n"
        "opt = build(w, 1e-3, foreach=False)\n"
        "opt2 = build_default(w)\n"
    )
    # `build` (not named for the optimizer) at its call; `build_default`, called without the
    # setting, at its default
    assert [v.line for v in lint_text(helpers, select="TD136").violations] == [9, 13]


def test_foreach_of_other_functions_or_files_without_an_optimizer_is_left_alone():
    clip = (
        "import torch\n\nparams = [torch.zeros(2, requires_grad=True)]\n"
        "torch.nn.utils.clip_grad_norm_(params, 1.0, foreach=False)\n"
    )
    assert codes(lint_text(clip, select="TD136")) == []
    no_optimizer = 'import torch\n\nSETTINGS = {"foreach": False}\n'
    assert codes(lint_text(no_optimizer, select="TD136")) == []


def test_a_foreach_placeholder_that_the_code_removes_is_left_alone():
    popped = CONFIG_DATACLASS + (
        '\n\ncfg = Config()\ncfg.optimizer_kwargs.pop("foreach")\n'
        "opt = build(nn.Linear(2, 2), cfg)\n"
    )
    assert codes(lint_text(popped, select="TD136")) == []
    only_when_asked = popped.replace(
        'cfg.optimizer_kwargs.pop("foreach")',
        'if cfg.fast:\n    cfg.optimizer_kwargs.pop("foreach")',
    )
    assert codes(lint_text(only_when_asked, select="TD136")) == ["TD136"]
