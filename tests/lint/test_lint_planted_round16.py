"""Forms of planted problems (the thirteenth set's misses) that lint rules missed before round
16, each next to a control that must stay silent."""

from __future__ import annotations

from lint_helpers import lint_text

ITEM_IN_FORWARD = """import torch
from torch import nn

SIZES = [30, 12, 7]


class Columns(nn.Module):
    def __init__(self):
        super().__init__()
        self.embs = nn.ModuleList(nn.Embedding(n, 4) for n in SIZES)
        self.head = nn.Linear(12, 1)

    def forward(self, cats, lengths):
        for k, size in enumerate(SIZES):
            top = cats[:, k].max().item()
            assert top < size
        packed = nn.utils.rnn.pack_padded_sequence(cats, lengths.cpu(), batch_first=True)
        return self.head(torch.cat([e(cats[:, k]) for k, e in enumerate(self.embs)], 1))


cats = torch.stack([torch.randint(0, n, (512,)) for n in SIZES], 1)
lengths = torch.full((512,), 3)
y = torch.randn(512, 1)
model = Columns().to("cpu")
opt = torch.optim.Adam(model.parameters())
for idx in torch.randperm(512).split(64):
    loss = nn.functional.mse_loss(model(cats[idx], lengths[idx]), y[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_item_in_the_forward_of_the_model_the_step_loop_calls_is_flagged():
    found = lint_text(ITEM_IN_FORWARD, select="TD116").violations
    # the `.cpu()` that pack_padded_sequence needs on the host is left alone
    assert [v.line for v in found] == [15]
    # a model the loop does not call on every step (only on some) runs its forward less often
    guarded = ITEM_IN_FORWARD.replace(
        "    loss = nn.functional.mse_loss(model(cats[idx], lengths[idx]), y[idx])",
        "    if idx[0] > 0:\n"
        "        loss = nn.functional.mse_loss(model(cats[idx], lengths[idx]), y[idx])",
    )
    assert lint_text(guarded, select="TD116").violations == []
    # a forward that no step loop calls: only evaluated
    evaluated = ITEM_IN_FORWARD.split("opt = torch.optim")[0] + (
        "with torch.no_grad():\n    print(model(cats, lengths))\n"
    )
    assert lint_text(evaluated, select="TD116").violations == []


CLEARED_BEFORE_THE_LOOP = """import torch
from torch import nn


def optimizer_coroutine(opt):
    opt.zero_grad()
    while True:
        loss = yield
        loss.backward()
        opt.step()


model = nn.Linear(4, 4)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
stepper = optimizer_coroutine(opt)
next(stepper)
x = torch.randn(256, 4)
for idx in torch.randperm(len(x)).split(64):
    stepper.send(nn.functional.mse_loss(model(x[idx]), x[idx]))
"""


def test_zero_grad_only_before_the_stepping_loop_is_flagged():
    found = lint_text(CLEARED_BEFORE_THE_LOOP, select="TD125").violations
    assert [v.line for v in found] == [6]
    # cleared in the loop too (gradient accumulation clears after its step): fine
    accumulating = CLEARED_BEFORE_THE_LOOP.replace(
        "        opt.step()\n", "        opt.step()\n        opt.zero_grad()\n"
    )
    assert lint_text(accumulating, select="TD125").violations == []
    # a module's zero_grad in the loop clears the same gradients
    by_module = CLEARED_BEFORE_THE_LOOP.replace(
        "        loss.backward()\n", "        model.zero_grad()\n        loss.backward()\n"
    )
    assert lint_text(by_module, select="TD125").violations == []
    # an LBFGS closure clears on every call of step()
    closure = CLEARED_BEFORE_THE_LOOP.replace(
        "        loss.backward()\n        opt.step()\n",
        "        loss.backward()\n        opt.step()\n\n\ndef closure():\n    opt.zero_grad()\n",
    )
    assert lint_text(closure, select="TD125").violations == []


STOPS_ON_A_DIVERGED_LOSS = """import math

import torch
from torch import nn

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x in torch.randn(8, 16, 4):
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    value = loss.item()
    if any([value > 1e8, math.isnan(value)]):
        raise RuntimeError("loss exploded")
"""


def test_a_loss_read_to_raise_on_divergence_is_needed_every_step():
    assert lint_text(STOPS_ON_A_DIVERGED_LOSS, select="TD116").violations == []
    logged = STOPS_ON_A_DIVERGED_LOSS.replace(
        '        raise RuntimeError("loss exploded")', "        print(value)"
    )
    assert [v.line for v in lint_text(logged, select="TD116").violations] == [13]


ENCODES_EACH_PART = """import torch
from torch import nn


class OneHot(nn.Module):
    def forward(self, x):
        return nn.functional.one_hot(x, 5)


def features(data):
    cat_encoder = OneHot()
    out = {}
    for part in ["train", "val", "test"]:
        out[part] = torch.cat([data[part]["num"], cat_encoder(data[part]["cat"])], 1)
    return out
"""


def test_a_category_encoder_applied_to_each_data_part_is_no_evaluation():
    assert lint_text(ENCODES_EACH_PART, select="TD106").violations == []
    # the same loop running a model over each part is an evaluation
    model = ENCODES_EACH_PART.replace("cat_encoder", "encoder")
    assert [v.line for v in lint_text(model, select="TD106").violations] == [13]


RELOADS_ITS_BEST_CHECKPOINT = """import os
import torch
from torch import nn


class EarlyStopping:
    def __call__(self, val_loss, model, path):
        pass


def train(args, setting, model, opt, data):
    path = os.path.join(args.checkpoints, setting)
    early_stopping = EarlyStopping()
    for epoch in range(3):
        for x in data:
            loss = model(x).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        early_stopping(loss, model, path)
    best_model_path = path + "/" + "checkpoint.pth"
    model.load_state_dict(torch.load(best_model_path))


def resume(args, model):
    save_checkpoint(model.state_dict(), args.out_dir)
    model.load_state_dict(torch.load(args.resume))


def test(args, setting, model):
    model.load_state_dict(torch.load(os.path.join(args.checkpoints, setting, "checkpoint.pth")))
"""


def test_reloading_the_checkpoint_a_saver_wrote_in_the_same_function_is_left_alone():
    found = lint_text(RELOADS_ITS_BEST_CHECKPOINT, select="TD111").violations
    # the best checkpoint early_stopping wrote under `path` is the program's own; a resume path
    # and a test-only load of a checkpoint from an earlier run are not
    assert [v.line for v in found] == [27, 31]


CLEARED_IN_A_HOOK = """import torch
from torch import nn


class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def after_backward(self):
        self.norm = sum(p.grad.norm() for p in self.model.parameters())
        self.model.zero_grad()

    def fit(self, data):
        for x in data:
            loss = self.model(x).sum()
            self.opt.zero_grad()
            loss.backward()
            self.after_backward()
            self.opt.step()


Trainer(nn.Linear(4, 1)).fit(torch.randn(8, 16, 4))
"""


def test_zero_grad_in_a_helper_called_between_backward_and_step_is_flagged():
    found = lint_text(CLEARED_IN_A_HOOK, select="TD124").violations
    assert [v.line for v in found] == [12]
    # the same hook called after the step clears gradients already used
    after = CLEARED_IN_A_HOOK.replace(
        "            self.after_backward()\n            self.opt.step()\n",
        "            self.opt.step()\n            self.after_backward()\n",
    )
    assert lint_text(after, select="TD124").violations == []
    # a helper that clears, computes and steps on its own is a whole step
    whole = CLEARED_IN_A_HOOK.replace(
        "        self.model.zero_grad()\n",
        "        self.model.zero_grad()\n        self.norm.backward()\n        self.opt.step()\n",
    )
    assert lint_text(whole, select="TD124").violations == []


EVAL_WHILE_CONSTRUCTING = """import torch
from torch import nn


class Experiment:
    def __init__(self):
        self.model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.3), nn.Linear(8, 2))
        self.check_export()
        self.opt = torch.optim.Adam(self.model.parameters())

    def check_export(self):
        self.model.eval()
        with torch.no_grad():
            torch.jit.trace(self.model, torch.randn(4, 8))


exp = Experiment()
for x in torch.randn(10, 16, 8):
    loss = exp.model(x).sum()
    exp.opt.zero_grad()
    loss.backward()
    exp.opt.step()
"""


def test_eval_run_while_building_the_trainer_object_is_flagged():
    found = lint_text(EVAL_WHILE_CONSTRUCTING, select="TD126").violations
    assert [v.line for v in found] == [12]
    # switched back before the loop: fine
    restored = EVAL_WHILE_CONSTRUCTING.replace(
        "exp = Experiment()\n", "exp = Experiment()\nexp.model.train()\n"
    )
    assert lint_text(restored, select="TD126").violations == []
    # a method that no constructor calls does not run before the loop
    unused = EVAL_WHILE_CONSTRUCTING.replace("        self.check_export()\n", "")
    assert lint_text(unused, select="TD126").violations == []


VALIDATION_COROUTINE = """import torch
from torch import nn


def val_coroutine(model):
    total = 0.0
    while True:
        batch = yield
        if batch is None:
            break
        with torch.no_grad():
            total += float(model(batch).sum())
    yield total


model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.3), nn.Linear(8, 2))
opt = torch.optim.Adam(model.parameters())
for epoch in range(2):
    for x in torch.randn(10, 16, 8):
        loss = model(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    meter = val_coroutine(model)
    next(meter)
    for x in torch.randn(4, 16, 8):
        meter.send(x)
    print(meter.send(None))
"""


def test_an_evaluation_named_val_something_without_eval_is_flagged():
    found = lint_text(VALIDATION_COROUTINE, select="TD107").violations
    assert [v.line for v in found] == [5]
    switched = VALIDATION_COROUTINE.replace(
        "    total = 0.0\n", "    model.eval()\n    total = 0.0\n"
    ).replace("    yield total\n", "    model.train()\n    yield total\n")
    assert lint_text(switched, select="TD107").violations == []
    # pytest's test functions are no evaluations
    pytest_style = VALIDATION_COROUTINE.replace("val_coroutine", "test_coroutine")
    assert lint_text(pytest_style, select="TD107").violations == []


ZERO_GRAD_NOT_CALLED = """import torch
from torch import nn

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x in torch.randn(8, 16, 4):
    opt.zero_grad
    model(x).sum().backward()
    opt.step()
"""


def test_zero_grad_referenced_without_its_call_is_flagged():
    found = lint_text(ZERO_GRAD_NOT_CALLED, select="TD125").violations
    assert [v.line for v in found] == [7]
    called = ZERO_GRAD_NOT_CALLED.replace("    opt.zero_grad\n", "    opt.zero_grad()\n")
    assert lint_text(called, select="TD125").violations == []


EVAL_ON_ENTER = """import torch
from torch import nn


class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters())

    def __enter__(self):
        self.model.eval()
        with torch.no_grad():
            assert torch.isfinite(self.model(torch.randn(4, 8))).all()
        return self

    def __exit__(self, *exc):
        return False

    def fit(self, data):
        for x in data:
            loss = self.model(x).sum()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()


with Trainer(nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.3))) as t:
    t.fit(torch.randn(10, 16, 8))
"""


def test_eval_in_the_trainers_enter_before_its_fit_loop_is_flagged():
    found = lint_text(EVAL_ON_ENTER, select="TD126").violations
    assert [v.line for v in found] == [11]
    restored = EVAL_ON_ENTER.replace(
        "        return self\n", "        self.model.train()\n        return self\n"
    )
    assert lint_text(restored, select="TD126").violations == []
