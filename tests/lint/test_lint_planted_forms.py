"""Forms of planted problems that rules TD101, TD102 and TD120 missed before round 10, each with
a control that must stay silent."""

from __future__ import annotations

from lint_helpers import codes, lint_text

LIST_OF_ARRAYS = """import numpy as np
import torch

rng = np.random.default_rng(0)
samples = [rng.standard_normal(16).astype(np.float32) for _ in range(100)]
numbers = [float(i) for i in range(100)]
for step in range(10):
    x = torch.tensor([samples[i] for i in range(8)])
    y = torch.tensor([numbers[i] for i in range(8)])
"""


def test_items_of_a_list_of_generator_arrays_are_arrays():
    found = lint_text(LIST_OF_ARRAYS, select="TD101").violations
    assert [v.line for v in found] == [8]


AUGMENTING_DATASET = """import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class Crops(Dataset):
    def __init__(self):
        self.images = np.zeros((64, 40, 40, 3), dtype=np.uint8)
        self.rng = np.random.default_rng(1)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        top = self.rng.integers(0, 8)
        return torch.from_numpy(self.images[i, top:top + 32].copy())


class InMemory(Dataset):
    def __init__(self):
        self.x = torch.randn(64, 3)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i]


model = torch.nn.Linear(3, 1)
for data in (Crops(), InMemory()):
    loader = DataLoader(data, batch_size=8)
    for epoch in range(2):
        for batch in loader:
            model(batch.float().flatten(1)[:, :3]).sum().backward()
"""


def test_random_augmentation_in_getitem_costs_work_per_item():
    assert codes(lint_text(AUGMENTING_DATASET, select="TD102")) == []  # dataset not shown
    direct = AUGMENTING_DATASET.replace(
        "for data in (Crops(), InMemory()):\n    loader = DataLoader(data, batch_size=8)",
        "for loader in (DataLoader(Crops(), batch_size=8), DataLoader(InMemory(), batch_size=8)):",
    )
    assert [v.line for v in lint_text(direct, select="TD102").violations] == [31]


ROW_LOOP = """import torch


def weighted_loss(pred, target, weights):
    total = pred.new_zeros(())
    for i in range(pred.shape[0]):
        err = pred[i] - target[i]
        total = total + weights[i] * (err * err).sum()
    return total


model = torch.nn.Linear(4, 2)
for step in range(5):
    x = torch.randn(8, 4)
    loss = weighted_loss(model(x), torch.randn(8, 2), torch.rand(8))
    loss.backward()
"""


def test_rows_of_a_parameter_every_caller_passes_a_tensor_for():
    assert codes(lint_text(ROW_LOOP, select="TD120")) == ["TD120"]
    lists = ROW_LOOP.replace(
        "weighted_loss(model(x), torch.randn(8, 2), torch.rand(8))",
        "weighted_loss(list(range(8)), [0.0] * 8, [1.0] * 8)",
    )
    assert codes(lint_text(lists, select="TD120")) == []


ROWS_OF_SELF_ARRAY = """import numpy as np
import torch


class Rows(torch.utils.data.Dataset):
    def __init__(self):
        self.rows = np.random.rand(100, 8)
        self.start = np.zeros(8)

    def __getitem__(self, i):
        return torch.tensor(self.rows[i])

    def initial(self):
        return torch.tensor(self.start)
"""


def test_rows_of_an_array_attribute_but_not_the_whole_attribute():
    found = lint_text(ROWS_OF_SELF_ARRAY, select="TD101").violations
    assert [v.line for v in found] == [11]


# --- round 12: TD116 reads that run every step outside the training loop's own level -------

PER_SAMPLE_READS = """import torch

model = torch.nn.Linear(20, 5)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
correct = 0
for step in range(60):
    x, y = torch.randn(32, 20), torch.randint(0, 5, (32,))
    logits = model(x)
    loss = torch.nn.functional.cross_entropy(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    hits = logits.argmax(1) == y
    for i in range(len(y)):
        correct += hits[i].item()
"""


def test_reads_in_a_loop_nested_in_the_training_loop_run_every_step():
    assert codes(lint_text(PER_SAMPLE_READS, select="TD116")) == ["TD116"]
    sampled = PER_SAMPLE_READS.replace(
        "        correct += hits[i].item()\n",
        "        if i == 0:\n            print(hits[i].item())\n",
    )
    assert codes(lint_text(sampled, select="TD116")) == []


ENVIRONMENT_ACTIONS = """import torch

policy = torch.nn.Linear(4, 2)
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
for episode in range(100):
    state, log_probs = env.reset(), []
    for t in range(200):
        dist = torch.distributions.Categorical(logits=policy(torch.as_tensor(state)))
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        state, reward, done, _ = env.step(action.item())
    loss = -torch.stack(log_probs).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def test_an_action_handed_to_the_environment_is_needed_on_the_host():
    assert codes(lint_text(ENVIRONMENT_ACTIONS, select="TD116")) == []
    logged = ENVIRONMENT_ACTIONS.replace(
        "        log_probs.append(",
        "        print(policy(torch.as_tensor(state)).max().item())\n        log_probs.append(",
    )
    assert codes(lint_text(logged, select="TD116")) == ["TD116"]


STEP_HELPERS = """import torch

model = torch.nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
index = torch.arange(64)


def clip_gradients(model):
    for p in model.parameters():
        norm = p.grad.norm().item()
        if norm > 1.0:
            p.grad.mul_(1.0 / norm)


def pick_rows():
    return index[torch.randperm(64)[:8]].tolist()


def evaluate_batch(x):
    return model(x).mean().item()


for step in range(100):
    x = torch.randn(8, 8)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    clip_gradients(model)
    opt.step()
    rows = pick_rows()
    score = evaluate_batch(x)
"""


def test_reads_in_a_helper_the_training_loop_calls_every_step():
    found = lint_text(STEP_HELPERS, select="TD116").violations
    assert [(v.code, v.line) for v in found] == [("TD116", 10)]  # not the CPU index, not eval
    every_tenth = STEP_HELPERS.replace(
        "    clip_gradients(model)\n", "    if step % 10 == 0:\n        clip_gradients(model)\n"
    )
    assert codes(lint_text(every_tenth, select="TD116")) == []


EARLY_RETURN = """import torch
import torch.nn as nn

model = nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)


def clip_gradients(model):
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    return
    for p in model.parameters():
        print(p.grad.norm().item())


for step in range(100):
    model(torch.randn(8, 8)).pow(2).mean().backward()
    clip_gradients(model)
    opt.step()
    opt.zero_grad()
"""


def test_code_after_a_helper_returns_never_runs():
    assert codes(lint_text(EARLY_RETURN, select="TD116")) == []
    reached = EARLY_RETURN.replace("    return\n", "")
    assert codes(lint_text(reached, select="TD116")) == ["TD116"]


TIMED_STEPS = """import torch

model = torch.nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def make_step():
    def step():
        optimizer.zero_grad()
        loss = model(torch.randn(8, 8)).pow(2).mean()
        loss.backward()
        optimizer.step()
        loss.item()

    return step


def time_runs(runs):
    for name, step in runs:
        step()
"""


def test_a_loop_variable_named_like_a_helper_does_not_call_it():
    assert codes(lint_text(TIMED_STEPS, select="TD116")) == []
    called = TIMED_STEPS.replace(
        "    for name, step in runs:\n        step()\n", "    return runs\n"
    )
    called = called.replace("    return step\n", "    for _ in range(10):\n        step()\n")
    assert codes(lint_text(called, select="TD116")) == ["TD116"]


CLEARED_WHEN_LOGGING = """import torch

model = torch.nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(600):
    loss = model(torch.randn(8, 8)).pow(2).mean()
    loss.backward()
    optimizer.step()
    if step % 50 == 0:
        print(step)
        optimizer.zero_grad()
"""


def test_zero_grad_indented_into_a_logging_block_clears_one_step_in_fifty():
    assert codes(lint_text(CLEARED_WHEN_LOGGING, select="TD125")) == ["TD125"]
    accumulation = CLEARED_WHEN_LOGGING.replace(
        "    optimizer.step()\n    if step % 50 == 0:\n",
        "    if step % 50 == 0:\n        optimizer.step()\n",
    )
    assert codes(lint_text(accumulation, select="TD125")) == []


def test_zero_grad_with_a_positional_false_fills_zeros():
    source = (
        "import torch\n\nmodel = torch.nn.Linear(4, 2)\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for _ in range(3):\n    opt.zero_grad(False)\n"
        "    model(torch.randn(2, 4)).sum().backward()\n    opt.step()\n"
    )
    assert [v.line for v in lint_text(source, select="TD122").violations] == [6]
    fixed = lint_text(source, select="TD122", fix=True, unsafe=True).fixed_source
    assert "opt.zero_grad()\n" in fixed
    kept = source.replace("zero_grad(False)", "zero_grad(True)")
    assert lint_text(kept, select="TD122").violations == []


ISLICE_PER_STEP = """import itertools

import torch
from torch.utils.data import DataLoader, TensorDataset


def one_batch(loader):
    return next(itertools.islice(loader, 1))


loader = DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64, 1)), batch_size=8)
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(100):
    x, y = one_batch(loader)
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_islice_of_a_loader_each_step_starts_a_new_iterator():
    assert [v.line for v in lint_text(ISLICE_PER_STEP, select="TD129").violations] == [8]
    kept = ISLICE_PER_STEP.replace("itertools.islice(loader, 1)", "itertools.islice(range(3), 1)")
    assert lint_text(kept, select="TD129").violations == []


NEGATED_SWITCH = """import torch

QUIET = False


class Trainer:
    def __init__(self, debug=False):
        torch.autograd.set_detect_anomaly(debug)


trainer = Trainer(debug=not QUIET)
"""


def test_a_setting_passed_as_the_negation_of_an_off_switch_is_on():
    assert [v.line for v in lint_text(NEGATED_SWITCH, select="TD127").violations] == [8]
    quiet = NEGATED_SWITCH.replace("QUIET = False", "QUIET = True")
    assert lint_text(quiet, select="TD127").violations == []


ZERO_GRAD_OPTIONS = """import torch

CFG = {"lr": 0.1, "zero_grad": {"set_to_none": False}}
model = torch.nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=CFG["lr"])
for _ in range(3):
    opt.zero_grad(**CFG["zero_grad"])
    model(torch.randn(2, 4)).sum().backward()
    opt.step()
"""


def test_zero_grad_unpacking_options_that_keep_zeros_is_flagged():
    assert [v.line for v in lint_text(ZERO_GRAD_OPTIONS, select="TD122").violations] == [7]
    default = ZERO_GRAD_OPTIONS.replace('{"set_to_none": False}', "{}")
    assert lint_text(default, select="TD122").violations == []


GENERATOR_OF_FRESH_ITERATORS = """import itertools

import torch
from torch.utils.data import DataLoader, TensorDataset


def stream(loader):
    while True:
        yield next(iter(loader))


def warm_start(loader):
    return next(iter(loader))


loader = DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64, 1)), batch_size=8)
model = torch.nn.Linear(4, 1)
first = warm_start(loader)
"""


def test_a_generator_yielding_next_iter_of_a_loader_starts_one_iterator_per_item():
    # the generator's item is a fresh iterator's first batch; a one-off batch is left alone
    found = lint_text(GENERATOR_OF_FRESH_ITERATORS, select="TD129").violations
    assert [v.line for v in found] == [9]


SCORED_UNDER_INFERENCE_MODE = """import torch
from torch import nn


@torch.inference_mode()
def score(model, x, y):
    return int((model(x).argmax(1) == y).sum())


model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    loss = nn.functional.cross_entropy(model(torch.randn(8, 4)), torch.randint(0, 2, (8,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
accuracy = score(model, torch.randn(8, 4), torch.randint(0, 2, (8,)))
"""


def test_a_function_decorated_to_run_without_grad_is_an_evaluation_whatever_its_name():
    assert [v.line for v in lint_text(SCORED_UNDER_INFERENCE_MODE, select="TD107").violations] == [
        6
    ]
    no_dropout = SCORED_UNDER_INFERENCE_MODE.replace(" nn.Dropout(0.3),", "")
    assert lint_text(no_dropout, select="TD107").violations == []


SAMPLE_BEFORE_TRAINING = """import torch
from torch import nn


@torch.no_grad()
def generate(model, start):
    model.eval()
    return model(torch.tensor([[start]])).argmax(-1)


model = nn.Sequential(nn.Embedding(16, 8), nn.Dropout(0.2), nn.Linear(8, 16))
teacher = nn.Sequential(nn.Embedding(16, 8), nn.Linear(8, 16))
teacher.eval()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
print(generate(model, 1))
for step in range(10):
    x = torch.randint(0, 16, (4, 5))
    loss = nn.functional.mse_loss(model(x), teacher(x))
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_the_trained_model_left_in_eval_mode_before_training_is_flagged_not_a_teacher():
    # the helper's eval() is never undone; the frozen teacher is no optimizer's model
    assert [v.line for v in lint_text(SAMPLE_BEFORE_TRAINING, select="TD126").violations] == [7]
    restored = SAMPLE_BEFORE_TRAINING.replace(
        "for step in range(10):\n", "model.train()\nfor step in range(10):\n"
    )
    assert lint_text(restored, select="TD126").violations == []


DTYPE_FROM_A_LOOKUP_TABLE = """import torch
from torch import nn

CONFIG = {"trainer": {"precision": "double"}}
PRECISIONS = {"single": torch.float32, "double": torch.float64}


def build(config):
    model = nn.Linear(8, 1)
    dtype = PRECISIONS[config["trainer"]["precision"]]
    return model.to(dtype)


model = build(CONFIG)
model(torch.randn(4, 8, dtype=torch.float64)).sum().backward()
"""


def test_a_dtype_looked_up_in_a_named_table_by_its_configured_key_is_resolved():
    assert [v.line for v in lint_text(DTYPE_FROM_A_LOOKUP_TABLE, select="TD128").violations] == [11]
    single = DTYPE_FROM_A_LOOKUP_TABLE.replace('"precision": "double"', '"precision": "single"')
    assert lint_text(single, select="TD128").violations == []
