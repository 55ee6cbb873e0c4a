"""TD106 on loops picked by their function's name: a function named for evaluation evaluates,
unless its name also says training or its body works with gradients."""

from __future__ import annotations

from lint_helpers import lint_text

FUNCTIONS = """import torch
from torch import nn

model = nn.Linear(4, 2)
xs = torch.randn(8, 4)


def eval_saliency(model, xs):
    maps = []
    for x in xs:
        x = x.clone().requires_grad_()
        (g,) = torch.autograd.grad(model(x).sum(), x)
        maps.append(g)
    return maps


def evaluate_with_adaptation(model, xs, opt):
    for x in xs:
        model(x).pow(2).mean()
        opt.step()


def train_evaluate(model, xs):
    for x in xs:
        x = torch.autograd.Variable(x)
        model(x)


def evaluate(model, xs, scheduler):
    total = 0.0
    for x in xs:
        total += model(x).sum()
    scheduler.step(total)
    model.train()
    return total
"""


def test_only_a_function_that_evaluates_without_gradients_is_an_evaluation_loop():
    # saliency maps (autograd.grad) and test-time adaptation (a step per batch) are left
    # alone; an evaluation on the training set (old `Variable` wrappers) and a plain
    # evaluation, which restores training mode and steps a plateau scheduler after its loop,
    # are flagged
    assert [v.line for v in lint_text(FUNCTIONS, select="TD106").violations] == [24, 31]
