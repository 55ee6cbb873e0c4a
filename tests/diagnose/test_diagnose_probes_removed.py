"""Probes leave no trace: every torch attribute patched during a diagnosis is restored, and
global hooks are removed, after a normal run, a crash and a `watch()` block."""

import builtins
import textwrap

import torch
import torch.utils.checkpoint
from diagnose_prelude import PRELUDE
from torch.nn.modules import module as module_globals
from torch.optim import optimizer as optimizer_globals
from torch.utils.data import DataLoader
from torch.utils.data.dataloader import _BaseDataLoaderIter

import torchdoctor
from torchdoctor.diagnose.api import diagnose_script

WATCHED = [
    (torch.Tensor, "item"), (torch.Tensor, "tolist"), (torch.Tensor, "numpy"),
    (torch.Tensor, "cpu"), (torch.Tensor, "__bool__"), (torch.Tensor, "__float__"),
    (torch.Tensor, "__int__"), (torch.Tensor, "to"), (torch.Tensor, "cuda"),
    (torch.Tensor, "__format__"), (torch.Tensor, "__repr__"), (torch.nn.Module, "__call__"),
    (torch.Tensor, "backward"), (torch.autograd, "backward"), (torch, "save"), (torch, "tensor"),
    (builtins, "print"), (DataLoader, "__init__"), (DataLoader, "__iter__"),
    (_BaseDataLoaderIter, "__next__"), (torch.optim.Optimizer, "__init__"),
    (torch.optim.Optimizer, "zero_grad"), (torch.amp.GradScaler, "step"),
    (torch.amp.GradScaler, "scale"), (torch.amp.GradScaler, "unscale_"),
    (torch.nn.utils, "clip_grad_norm_"), (torch.utils.checkpoint, "checkpoint"),
]  # fmt: skip

SCRIPT = """
model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(TensorDataset(torch.randn(64, 4)), batch_size=8)
for step, (x,) in enumerate(loader):
    loss = model(x).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step == 5:
        raise RuntimeError("boom")
"""


def _snapshot():
    attributes = {(owner, name): owner.__dict__.get(name) for owner, name in WATCHED}
    hooks = (
        len(module_globals._global_forward_pre_hooks),
        len(module_globals._global_forward_hooks),
        len(optimizer_globals._global_optimizer_pre_hooks),
        len(optimizer_globals._global_optimizer_post_hooks),
    )
    return attributes, hooks


def test_everything_is_restored_after_a_crashing_run_and_after_watch(tmp_path, capsys):
    before = _snapshot()
    script = tmp_path / "train.py"
    script.write_text(PRELUDE + textwrap.dedent(SCRIPT))
    report = diagnose_script(str(script), steps=0, warmup=2)
    assert report.run.status == "crashed" and len(report.run.steps) == 4
    assert "RuntimeError: boom" in capsys.readouterr().err
    assert _snapshot() == before

    model = torch.nn.Linear(4, 2)
    with torchdoctor.watch() as watched:
        for _ in range(5):
            model(torch.randn(3, 4)).sum().backward()
        assert _snapshot() != before  # the probes really were installed
    assert _snapshot() == before
    # 5 backward() calls, no optimizer: 5 steps, the first 3 (default --warmup) unmeasured
    assert watched.report.run.manual_updates and len(watched.report.run.steps) == 2
    assert watched.report.run.status == "completed"
