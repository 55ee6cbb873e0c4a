"""The rules about work done once per training step (TD129-TD133): each flags the planted form
and leaves alone the near misses taken from real training code (a guarded save, a copy per
epoch, a total under no_grad, a GAN that steps between its two backward passes)."""

from __future__ import annotations

from lint_helpers import lint_text

HEAD = """import copy
import torch
from torch.utils.data import DataLoader

loader = DataLoader(list(range(64)), batch_size=8, shuffle=True, num_workers=2)
model = torch.nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
"""


def lines(source: str, code: str) -> list[int]:
    return [v.line - HEAD.count("\n") for v in lint_text(HEAD + source, select=code).violations]


def test_td129_next_iter_on_every_step_and_through_a_helper():
    assert lines(
        "for step in range(9):\n    x = next(iter(loader))\n    model(x).sum().backward()\n",
        "TD129",
    ) == [2]
    helper = (
        "def sample(loader):\n    return next(iter(loader))\n\n"
        "for step in range(9):\n    x = sample(loader)\n    model(x).sum().backward()\n"
    )
    assert lines(helper, "TD129") == [2]


def test_td129_leaves_a_sample_batch_outside_the_steps():
    planted = "for step in range(9):\n    x = next(iter(loader))\n    model(x).sum().backward()\n"
    assert lines(planted, "TD129") == [2]
    once = "x = next(iter(loader))\nfor step in range(9):\n    model(x).sum().backward()\n"
    assert lines(once, "TD129") == []
    per_epoch = (  # a batch to plot once per epoch, beside the step loop
        "for epoch in range(3):\n    for x in loader:\n        model(x).sum().backward()\n"
        "    shown = next(iter(loader))\n"
    )
    assert lines(per_epoch, "TD129") == []
    not_a_loader = (
        "for step in range(9):\n    x = next(iter(batches))\n    model(x).sum().backward()\n"
    )
    assert lines(not_a_loader, "TD129") == []


STEP = "for x in loader:\n    model(x).sum().backward()\n    opt.step()\n"


def test_td130_model_copied_every_step_but_not_when_guarded_or_per_epoch():
    assert lines(STEP + "    ema = copy.deepcopy(model)\n", "TD130") == [4]
    built = (
        "class Net(torch.nn.Module):\n    fc = torch.nn.Linear(8, 1)\n\nonline = Net()\n"
        + STEP
        + (
            "    target = copy.deepcopy(online)\n"
            "    swa = torch.optim.swa_utils.AveragedModel(model)\n"
        )
    )
    assert lines(built, "TD130") == [8, 9]
    guarded = STEP + "    if step % 100 == 0:\n        ema = copy.deepcopy(model)\n"
    assert lines(guarded, "TD130") == []
    per_epoch = (
        "for epoch in range(3):\n    model(x).sum().backward()\n    best = copy.deepcopy(model)\n"
    )
    assert lines(per_epoch, "TD130") == []
    assert lines(STEP + "    saved = copy.deepcopy(opt.param_groups)\n", "TD130") == []


def test_td131_two_losses_of_one_forward_but_not_a_gan_that_steps_between():
    two_heads = (
        "for x in loader:\n    out = model(x)\n    a = out.sum()\n    b = out.mean()\n"
        "    a.backward(retain_graph=True)\n    torch.nn.functional.mse_loss(out, x).backward()\n"
    )
    assert lines(two_heads, "TD131") == [5]
    gan = (
        "for x in loader:\n    out = model(x)\n    d_loss = out.sum()\n"
        "    d_loss.backward(retain_graph=True)\n    opt.step()\n    g_loss = out.mean()\n"
        "    g_loss.backward()\n"
    )
    assert lines(gan, "TD131") == []
    new_forward = (
        "for x in loader:\n    a = model(x).sum()\n    a.backward(retain_graph=True)\n"
        "    b = model(x).mean()\n    b.backward()\n"
    )
    assert lines(new_forward, "TD131") == []


def test_td132_save_on_every_step_but_not_every_n_steps_nor_per_epoch():
    assert lines(STEP + '    torch.save(model.state_dict(), "c.pt")\n', "TD132") == [4]
    every_n = STEP + '    if step % 1000 == 0:\n        torch.save(model.state_dict(), "c.pt")\n'
    assert lines(every_n, "TD132") == []
    full_graph = (  # one step per epoch (pyGAT's early stopping)
        "def train():\n    model(x).sum().backward()\n    opt.step()\n\n"
        'for epoch in range(9):\n    train()\n    torch.save(model.state_dict(), f"{epoch}.pkl")\n'
    )
    assert lines(full_graph, "TD132") == []


def test_td133_running_total_or_list_of_loss_tensors():
    source = (
        "total, history = 0.0, []\nfor x in loader:\n    loss = model(x).sum()\n"
        "    loss.backward()\n    total += loss\n    history.append(loss * 2)\n"
        "    history.append(loss.item())\n    total += loss.detach()\n"
    )
    assert lines(source, "TD133") == [5, 6]


def test_td133_leaves_totals_reset_per_step_under_no_grad_or_backpropagated():
    planted = (
        "total = torch.zeros(1)\nfor x in loader:\n    loss = model(x).sum()\n"
        "    loss.backward()\n    total += loss\n"
    )
    assert lines(planted, "TD133") == [5]
    no_grad = (
        "total = torch.zeros(1)\nfor x in loader:\n    loss = model(x).sum()\n"
        "    loss.backward()\n    with torch.no_grad():\n        total += loss\n"
    )
    assert lines(no_grad, "TD133") == []
    accumulated = (  # a loss summed over chunks on purpose, then backpropagated (TBPTT)
        "for x in loader:\n    acc = 0\n    for chunk in x:\n        part = model(chunk).sum()\n"
        "        acc += part\n    acc.backward()\n"
    )
    assert lines(accumulated, "TD133") == []
    number = (
        "total = 0.0\nfor x in loader:\n    loss = model(x).sum()\n    loss.backward()\n"
        "    loss = loss.item()\n    total += loss\n"
    )
    assert lines(number, "TD133") == []


def test_td133_a_smoothed_loss_rebuilt_from_itself():
    source = (
        "smooth = 0.0\nfor x in loader:\n    loss = model(x).sum()\n    loss.backward()\n"
        "    smooth = 0.98 * smooth + 0.02 * loss\n    shown = 0.5 * loss\n"
    )
    assert lines(source, "TD133") == [5]
    as_number = source.replace("0.02 * loss\n", "0.02 * loss.item()\n")
    assert lines(as_number, "TD133") == []


PROFILED = """kwargs = {KWARGS}
prof = torch.profiler.profile(**kwargs)
prof.start()
for x in loader:
    model(x).sum().backward()
    opt.step()
    prof.step()
"""


def test_td134_keyword_arguments_passed_as_a_dict():
    assert lines(PROFILED.replace("{KWARGS}", "{}"), "TD134") == [2]
    scheduled = '{"schedule": torch.profiler.schedule(wait=1, warmup=1, active=3)}'
    assert lines(PROFILED.replace("{KWARGS}", scheduled), "TD134") == []


def test_td131_a_backward_per_task_in_a_loop_but_not_when_each_reads_its_gradients():
    per_task = (
        "for x in loader:\n    losses = {'a': model(x).sum(), 'b': model(x).mean()}\n"
        "    opt.zero_grad()\n    for name, value in losses.items():\n"
        "        value.backward(retain_graph=True)\n    opt.step()\n"
    )
    assert lines(per_task, "TD131") == [5]
    surgery = per_task.replace(  # PCGrad-like: each task's gradient is read before the next
        "        value.backward(retain_graph=True)\n",
        "        value.backward(retain_graph=True)\n        grads = [p.grad.clone() for p in model.parameters()]\n",
    )
    assert lines(surgery, "TD131") == []
