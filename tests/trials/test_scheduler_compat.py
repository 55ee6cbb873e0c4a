"""Trials wrap each optimizer's step; LR schedulers must still be able to attach to it (QA2-3)."""

import torch
from torch import nn

from torchdoctor.intercept.hooks import Hooks


def test_lr_scheduler_attaches_to_a_wrapped_optimizer_and_every_step_is_seen():
    hooks = Hooks(cpu_count=2)
    steps_seen = []
    hooks.on_step.append(steps_seen.append)
    hooks.install()
    try:
        model = nn.Linear(3, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        # LRScheduler.__init__ unwraps optimizer.step.__func__: a plain closure broke it.
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
        for _ in range(4):
            optimizer.zero_grad()
            model(torch.randn(4, 3)).sum().backward()
            optimizer.step()
            scheduler.step()
    finally:
        hooks.uninstall()
    assert len(steps_seen) == 4
    assert optimizer.param_groups[0]["lr"] == 0.1 * 0.5 * 0.5
