"""Forms of planted problems (the twelfth set's m03, m04, m07, m16, m25, m27, m29) that rules
TD101, TD102, TD120, TD125, TD132, TD133 and TD134 missed before round 15, each next to a
control that must stay silent."""

from __future__ import annotations

from lint_helpers import lint_text

ONE_OF_THE_OPTIMIZERS_CLEARED = """import torch
from torch import nn


def update(loss, optimizers):
    optimizers[-1].zero_grad()
    loss.backward()
    for opt in optimizers:
        opt.step()


enc = nn.Linear(2, 2)
dec = nn.Linear(2, 2)
opts = [torch.optim.SGD(enc.parameters(), lr=0.1), torch.optim.Adam(dec.parameters())]
for _ in range(3):
    update(dec(enc(torch.randn(4, 2))).sum(), opts)
"""


def test_only_one_optimizer_of_a_stepped_collection_cleared_is_flagged():
    found = lint_text(ONE_OF_THE_OPTIMIZERS_CLEARED, select="TD125").violations
    assert [v.line for v in found] == [6]
    every = ONE_OF_THE_OPTIMIZERS_CLEARED.replace(
        "    optimizers[-1].zero_grad()", "    for opt in optimizers:\n        opt.zero_grad()"
    )
    assert lint_text(every, select="TD125").violations == []
    # each element cleared by its own index may be all of them (a GAN's two optimizers)
    both = ONE_OF_THE_OPTIMIZERS_CLEARED.replace(
        "    optimizers[-1].zero_grad()",
        "    optimizers[0].zero_grad()\n    optimizers[1].zero_grad()",
    )
    assert lint_text(both, select="TD125").violations == []


BEST_ON_TRAINING_LOSS = """import torch
from torch import nn


class BestCheckpoint:
    def __init__(self, path):
        self.path, self.best = path, float("inf")

    def after_step(self, loss, model):
        if loss < self.best:
            self.best = loss
            torch.save(model.state_dict(), self.path)


model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
ckpt = BestCheckpoint("best.pt")
best_val_loss = 1e9
for step in range(100):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    ckpt.after_step(float(loss), model)
    if step % 10 == 0:
        val_loss = float(model(torch.randn(8, 4)).pow(2).mean())
        if val_loss < best_val_loss:
            torch.save(model.state_dict(), "val_best.pt")
"""


def test_a_checkpoint_on_each_new_best_training_loss_is_flagged_not_on_the_validation_loss():
    found = lint_text(BEST_ON_TRAINING_LOSS, select="TD132").violations
    assert [v.line for v in found] == [12]  # the training loss's; not `val_loss < best_val_loss`
    assert "new best training loss" in found[0].message
    every_hundred = BEST_ON_TRAINING_LOSS.replace(
        "    ckpt.after_step(float(loss), model)",
        "    if step % 100 == 0:\n        ckpt.after_step(float(loss), model)",
    )
    assert lint_text(every_hundred, select="TD132").violations == []


PROFILER_IN_A_CALLBACK = """import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile


class ProfileFirstSteps:
    def __init__(self):
        self.prof = None

    def on_train_begin(self):
        self.prof = profile(activities=[ProfilerActivity.CPU])
        self.prof.start()

    def on_step_end(self):
        if self.prof is None:
            return
        self.prof.step()

    def on_train_end(self):
        if self.prof is not None:
            self.prof.stop()


def fit(model, data, callbacks):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for cb in callbacks:
        cb.on_train_begin()
    for x, y in data:
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        for cb in callbacks:
            cb.on_step_end()
    for cb in callbacks:
        cb.on_train_end()
"""


def test_a_profiler_a_callback_starts_and_steps_every_step_is_flagged_unless_it_stops_it():
    found = lint_text(PROFILER_IN_A_CALLBACK, select="TD134").violations
    assert [v.line for v in found] == [11]
    stopped = PROFILER_IN_A_CALLBACK.replace(
        "        self.prof.step()\n",
        "        self.prof.step()\n        if self.prof.step_num == 5:\n            self.prof.stop()\n",
    )
    assert lint_text(stopped, select="TD134").violations == []
    never_started = PROFILER_IN_A_CALLBACK.replace("        self.prof.start()\n", "")
    assert lint_text(never_started, select="TD134").violations == []


SHARDED_STREAM = """import torch
from torch import nn
from torch.utils.data import DataLoader, IterableDataset, get_worker_info


class Stream(IterableDataset):
    def __iter__(self):
        info = get_worker_info()
        start, stride = (info.id, info.num_workers) if info else (0, 1)
        for i in range(start, 1000, stride):
            x = torch.randn(1, 32, 32)
            for _ in range(8):
                x = nn.functional.avg_pool2d(x, 3, stride=1, padding=1)
            yield x, x.std()


workers = 0
loader = DataLoader(Stream(), batch_size=32, num_workers=workers)
model = nn.Conv2d(1, 1, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for x, y in loader:
        loss = model(x).mean() - y.mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


def test_no_workers_for_a_dataset_written_to_split_across_workers_is_flagged():
    found = lint_text(SHARDED_STREAM, select="TD102").violations
    assert [v.line for v in found] == [18]
    assert "get_worker_info" in found[0].message
    assert (
        lint_text(SHARDED_STREAM.replace("workers = 0", "workers = 2"), select="TD102").violations
        == []
    )
    # rows already in memory, yielded as they are: cheaper without workers
    in_memory = SHARDED_STREAM.replace(
        "            x = torch.randn(1, 32, 32)\n"
        "            for _ in range(8):\n"
        "                x = nn.functional.avg_pool2d(x, 3, stride=1, padding=1)\n"
        "            yield x, x.std()",
        "            yield ROWS[i], ROWS[i].std()",
    ).replace("workers = 0", "ROWS = torch.randn(1000, 1, 32, 32)\nworkers = 0")
    assert "ROWS[i]" in in_memory
    assert lint_text(in_memory, select="TD102").violations == []
    # without the split, an explicit `num_workers=0` stays the author's choice
    unsplit = SHARDED_STREAM.replace("info = get_worker_info()", "info = None")
    assert lint_text(unsplit, select="TD102").violations == []


ROWS_FROM_LISTS = """import random

import torch
from torch import nn

pool = torch.randn(4000, 64).tolist()
labels = torch.randint(0, 2, (4000,))
model = nn.Linear(64, 2)
opt = torch.optim.Adam(model.parameters())
for step in range(100):
    chosen = [random.randrange(4000) for _ in range(256)]
    x = torch.tensor([pool[i] for i in chosen])
    loss = nn.functional.cross_entropy(model(x), labels[chosen])
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_a_batch_rebuilt_every_step_from_rows_of_a_tolist_pool_is_flagged():
    assert [v.line for v in lint_text(ROWS_FROM_LISTS, select="TD101").violations] == [12]
    # once, before training: one conversion
    once = "import torch\n\npool = torch.randn(40, 4).tolist()\nx = torch.tensor([pool[i] for i in range(8)])\n"
    assert lint_text(once, select="TD101").violations == []


PER_CHANNEL = """import torch
from torch import nn


class FakeQuantLinear(nn.Linear):
    def quantized_weight(self):
        w = self.weight
        rows = []
        for c in range(w.shape[0]):
            scale = w[c].abs().max() / 127
            rows.append(w[c] + ((w[c] / scale).round() * scale - w[c]).detach())
        return torch.stack(rows)

    def forward(self, x):
        return nn.functional.linear(x, self.quantized_weight(), self.bias)
"""


def test_a_loop_over_the_rows_of_a_layers_own_weight_is_flagged():
    assert [v.line for v in lint_text(PER_CHANNEL, select="TD120").violations] == [9]
    # `self.weight` of a plain nn.Module subclass is whatever the class makes it
    plain = PER_CHANNEL.replace("(nn.Linear)", "(nn.Module)")
    assert lint_text(plain, select="TD120").violations == []


KEY_QUEUE = """import torch
from torch import nn

query_enc, key_enc = nn.Linear(8, 4), nn.Linear(8, 4)
key_enc.load_state_dict(query_enc.state_dict())
opt = torch.optim.SGD(query_enc.parameters(), lr=0.1)
queue = torch.zeros(0, 4)
for step in range(100):
    x = torch.randn(16, 8)
    q = query_enc(x)
    k = key_enc(x)
    loss = torch.cat([(q * k).sum(1, keepdim=True), q @ queue.t()], 1).logsumexp(1).mean()
    opt.zero_grad()
    loss.backward(retain_graph=True)
    opt.step()
    queue = torch.cat([k, queue])[:1024]
"""


def test_a_queue_rebuilt_from_outputs_with_their_graphs_is_flagged():
    assert [v.line for v in lint_text(KEY_QUEUE, select="TD133").violations] == [16]
    detached = KEY_QUEUE.replace("    k = key_enc(x)", "    k = key_enc(x).detach()")
    assert lint_text(detached, select="TD133").violations == []
    no_grad = KEY_QUEUE.replace(
        "    k = key_enc(x)", "    with torch.no_grad():\n        k = key_enc(x)"
    )
    assert lint_text(no_grad, select="TD133").violations == []


CELL_STEP_METHOD = """import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(12, 16)
        self.rnn = nn.GRU(16, 32, batch_first=True)
        self.out = nn.Linear(32, 12)

    def cell_step(self, token, h):
        w = self.rnn
        h = torch.gru_cell(self.embed(token), h, w.weight_ih_l0, w.weight_hh_l0, w.bias_ih_l0, w.bias_hh_l0)
        return self.out(h), h

    def forward(self, tgt_in, h):
        logits = []
        for t in range(tgt_in.shape[1]):
            step_logits, h = self.cell_step(tgt_in[:, t], h)
            logits.append(step_logits)
        return torch.stack(logits, 1)

    def greedy(self, token, h):
        outs = []
        for _ in range(24):
            logits, h = self.cell_step(token, h)
            token = logits.argmax(1)
            outs.append(token)
        return torch.stack(outs, 1)
"""


def test_a_cell_stepped_through_a_method_of_the_class_is_flagged_not_when_decoding():
    # teacher forcing over the known target is flagged; greedy decoding feeds its own output
    assert [v.line for v in lint_text(CELL_STEP_METHOD, select="TD135").violations] == [19]
    fused = CELL_STEP_METHOD.replace(
        "        logits = []\n",
        "        return self.out(self.rnn(self.embed(tgt_in), h[None])[0])\n        logits = []\n",
    )
    assert lint_text(fused, select="TD135").violations == []  # the loop after `return` is dead


PROFILER_ON_BY_DEFAULT = """from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class RunConfig:
    profile: bool = True

    def __post_init__(self):
        self.profiler = None
        if self.profile:
            self.profiler = torch.profiler.profile(record_shapes=True)
            self.profiler.start()

    def step(self):
        if self.profiler is not None:
            self.profiler.step()


cfg = RunConfig()
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(100):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    cfg.step()
"""


def test_a_profiling_switch_on_by_default_is_no_opt_in():
    assert [v.line for v in lint_text(PROFILER_ON_BY_DEFAULT, select="TD134").violations] == [14]
    off = PROFILER_ON_BY_DEFAULT.replace("profile: bool = True", "profile: bool = False")
    assert lint_text(off, select="TD134").violations == []


def test_code_after_a_return_is_dead_for_td101():
    dead = (
        "import numpy as np\nimport torch\n\n\ndef sample(rows, picks):\n"
        "    return torch.from_numpy(rows[picks])\n"
        "    return torch.tensor([np.asarray(rows[k]) for k in picks])\n"
    )
    assert lint_text(dead, select="TD101").violations == []
    live = dead.replace("    return torch.from_numpy(rows[picks])\n", "")
    assert [v.line for v in lint_text(live, select="TD101").violations] == [6]


RING_OF_ARRAYS = """import numpy as np
import torch


class Ring:
    def __init__(self, slots):
        self.slots = [None] * slots
        self.head = 0

    def push(self, tokens):
        self.slots[self.head] = tokens
        self.head = (self.head + 1) % len(self.slots)

    def sample(self, picks):
        return torch.tensor([self.slots[k] for k in picks])


ring = Ring(64)
for step in range(100):
    ring.push(np.arange(129) * (step % 7 + 1) % 500)
    batch = ring.sample(np.random.default_rng(step).integers(0, 64, 32))
"""


def test_a_list_of_slots_filled_with_arrays_is_a_list_of_arrays():
    assert [v.line for v in lint_text(RING_OF_ARRAYS, select="TD101").violations] == [15]
    # slots filled with Python lists: not arrays
    lists = RING_OF_ARRAYS.replace(
        "ring.push(np.arange(129) * (step % 7 + 1) % 500)", "ring.push(list(range(129)))"
    )
    assert lint_text(lists, select="TD101").violations == []
