"""Findings from running lint on other people's code (QA, torch's own sources): fixes that
must not be applied by plain `--fix`, and rules that must follow the model they talk about
rather than anything else in the file."""

from __future__ import annotations

from lint_helpers import lint_text, run_cli

ZERO_GRAD_THEN_ADD = """import torch


def grads_after_zero(model, opt):
    opt.zero_grad(set_to_none=False)
    for p in model.parameters():
        p.grad += 0.01 * p.data  # relies on zero tensors, not None
"""


def test_zero_grad_set_to_none_false_kept_where_grads_are_updated_in_place(project):
    target = project / "train.py"
    target.write_text(ZERO_GRAD_THEN_ADD)
    out = run_cli("--fix", "--unsafe-fixes", target)
    assert out.returncode == 0 and target.read_text() == ZERO_GRAD_THEN_ADD
    plain = ZERO_GRAD_THEN_ADD.replace("        p.grad += 0.01 * p.data", "        p.data -= 0.01")
    target.write_text(plain)
    assert run_cli("--fix", target).returncode == 1 and target.read_text() == plain
    run_cli("--fix", "--unsafe-fixes", target)
    assert "opt.zero_grad()\n" in target.read_text()


CONV_CLASS_ON_CUDA = """import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = Head()


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)


def main(loader):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    {model_line}
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    for x, y in loader:
        net(x.to(device)).sum().backward()
        optimizer.step()
"""


def test_cudnn_rule_follows_the_trained_model_into_its_classes():
    found = lint_text(
        CONV_CLASS_ON_CUDA.format(model_line="net = Net().to(device)"), select="TD121"
    )
    assert [(v.line, v.code) for v in found.violations] == [(14, "TD121")]  # the conv inside Head
    on_cpu = lint_text(CONV_CLASS_ON_CUDA.format(model_line="net = Net()"), select="TD121")
    assert on_cpu.violations == []


def test_ddp_batchnorm_is_info_off_by_default_and_follows_reassignment():
    from torchdoctor.lint.rules.td117_ddp_batchnorm_without_sync import DdpBatchNormWithoutSync

    # whether SyncBatchNorm pays depends on the per-GPU batch, which the code rarely shows
    assert DdpBatchNormWithoutSync.level == "info" and not DdpBatchNormWithoutSync.default_enabled
    source = (
        "import torch.nn as nn\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
        "model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))\nmodel = model.to(rank)\n"
        "model = DDP(model)\n"
    )
    assert [v.line for v in lint_text(source, select="TD117").violations] == [5]


def test_pep263_source_is_read_and_fixed_in_its_own_encoding(project):
    target = project / "legacy.py"
    original = '# -*- coding: latin-1 -*-\nimport torch\nname = "caf\xe9"\nscaler = torch.cuda.amp.GradScaler()\n'
    target.write_bytes(original.encode("latin-1"))
    out = run_cli("--fix", target)
    assert out.returncode == 0, out.stdout
    assert target.read_bytes().decode("latin-1") == original.replace(
        "torch.cuda.amp.GradScaler()", 'torch.amp.GradScaler("cuda")'
    )
    bom = project / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbfimport torch\nscaler = torch.cuda.amp.GradScaler()\n")
    run_cli("--fix", bom)
    assert bom.read_bytes().startswith(b"\xef\xbb\xbfimport torch\n")  # the BOM is kept
    broken = project / "broken.py"
    broken.write_bytes(b"import torch\nname = '\xe9'\n")
    out = run_cli(broken)
    assert out.returncode == 1 and "TD000 not UTF-8: invalid continuation byte" in out.stdout
    unknown = project / "unknown.py"
    unknown.write_text("# coding: no-such-codec\nimport torch\n")
    assert "TD000 unknown encoding: no-such-codec" in run_cli(unknown).stdout
