"""Patterns from real training code (round 10's corpus review) that rules must leave alone, each
next to the planted form the rule must still flag."""

from __future__ import annotations

from lint_helpers import codes, lint_text

ONE_OFF_GRID = """import numpy as np
import torch

times = torch.tensor(np.linspace(0.0, 1.0, 50))


class Series(torch.utils.data.Dataset):
    def __getitem__(self, index):
        return torch.tensor(np.arange(index, index + 8))
"""


def test_one_off_generated_grid_is_not_a_copy_worth_flagging():
    found = lint_text(ONE_OFF_GRID, select="TD101").violations
    assert [v.line for v in found] == [9]  # the per-item one only


STOP_ON_LOSS = """import torch

model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(1000):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    value = loss.item()
    if value < 1e-3:
        break
"""


def test_loss_read_to_decide_when_to_stop_is_needed():
    assert codes(lint_text(STOP_ON_LOSS, select="TD116")) == []
    logged = STOP_ON_LOSS.replace("    if value < 1e-3:\n        break\n", "    print(value)\n")
    assert codes(lint_text(logged, select="TD116")) == ["TD116"]


PREDICT_AFTER_TEST = """import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)


def train(loader):
    model.train()
    for x, y in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()


def test(loader):
    model.eval()
    with torch.no_grad():
        for x, y in loader:
            model(x)


def predict(x):
    return model(x.unsqueeze(0)).argmax()


for epoch in range(2):
    train([])
    test([])
print(predict(torch.randn(4)))
"""


def test_predict_after_a_function_that_leaves_eval_mode():
    assert codes(lint_text(PREDICT_AFTER_TEST, select="TD107")) == []
    restored = PREDICT_AFTER_TEST.replace(
        "            model(x)\n", "            model(x)\n    model.train()\n"
    )
    assert codes(lint_text(restored, select="TD107")) == ["TD107"]


BEST_RELOAD = """import torch


def fit(model, loader, opt, path, stopper):
    for x, y in loader:
        opt.zero_grad()
        loss = (model(x) - y).pow(2).mean()
        loss.backward()
        opt.step()
        stopper(loss, model, path)
    model.load_state_dict(torch.load(path + "/checkpoint.pth"))
    return model


def resume(model, path):
    model.load_state_dict(torch.load(path))


def test(model, path):
    model.load_state_dict(torch.load(path + "/checkpoint.pth"))
"""


def test_best_checkpoint_reload_after_training_knows_its_device():
    found = lint_text(BEST_RELOAD, select="TD110").violations
    # the resume, not the reload after the loop nor the test's load of the file it reloads
    assert [v.line for v in found] == [16]


EVALUATE_PLAIN_MODEL = """import torch
from model import Net

model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)


def test(loader):
    with torch.no_grad():
        for x, y in loader:
            model(x)


for epoch in range(2):
    for x, y in []:
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()
    test([])
"""


def test_eval_mode_changes_nothing_without_mode_dependent_layers(tmp_path):
    script = tmp_path / "main.py"
    (tmp_path / "model.py").write_text(
        "import torch\nclass Net(torch.nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc = torch.nn.Linear(4, 1)\n"
    )
    assert codes(lint_text(EVALUATE_PLAIN_MODEL, select="TD107", path=str(script))) == []
    (tmp_path / "model.py").write_text("import torch\nlayers = [torch.nn.Dropout(0.1)]\n")
    assert codes(lint_text(EVALUATE_PLAIN_MODEL, select="TD107", path=str(script))) == ["TD107"]
    imported = EVALUATE_PLAIN_MODEL.replace("from model import Net", "from timm import Net")
    assert codes(lint_text(imported, select="TD107", path=str(script))) == ["TD107"]


# --- round 11: the widened corpus (PyTorch-GAN, CPA-Project, vqvae, ...) -------------------

CHAINED_NUMPY = """import torch

model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for step in range(10):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.cpu().detach().numpy())
"""


def test_a_chain_of_host_reads_is_one_finding():
    found = lint_text(CHAINED_NUMPY, select="TD116").violations
    assert [(v.line, v.message.split("`")[1]) for v in found] == [(11, ".numpy()")]


TEST_LOADER_LENGTH = """import torch
from torchvision.datasets import MNIST

train_loader = torch.utils.data.DataLoader(MNIST("data", train=True), batch_size=32)
test_loader = torch.utils.data.DataLoader(MNIST("data", train=False), batch_size=32)
sample_loader = torch.utils.data.DataLoader(MNIST("data", train=False), batch_size=8)
model = torch.nn.Linear(784, 10)
for epoch in range(3):
    for x, y in train_loader:
        model(x).sum().backward()
with torch.no_grad():
    total = 0.0
    for x, y in test_loader:
        total += model(x).sum() / len(test_loader)
    x, y = next(iter(sample_loader))
imported_loader = torch.utils.data.DataLoader(MNIST("data", train=False), batch_size=8)
if __name__ == "__main__":
    unused_loader = torch.utils.data.DataLoader(MNIST("data", train=False), batch_size=8)
"""


def test_one_pass_reading_its_own_length_and_loaders_used_once_or_never():
    found = lint_text(TEST_LOADER_LENGTH, select="TD102").violations
    # the training loader, and one another module may import; not the main block's unused one
    assert [v.line for v in found] == [4, 16]


EVALUATE_WITH_TORCHVISION_DATA = EVALUATE_PLAIN_MODEL.replace(
    "from model import Net", "from model import Net\nfrom torchvision import datasets, transforms"
)


def test_torchvision_datasets_and_transforms_build_no_layers(tmp_path):
    script = tmp_path / "main.py"
    (tmp_path / "model.py").write_text("import torch\nlayer = torch.nn.Linear(4, 1)\n")
    found = lint_text(EVALUATE_WITH_TORCHVISION_DATA, select="TD107", path=str(script))
    assert codes(found) == []
    with_models = EVALUATE_WITH_TORCHVISION_DATA.replace("transforms", "models")
    found = lint_text(with_models, select="TD107", path=str(script))
    assert codes(found) == ["TD107"]


CPU_MODEL_RESUME = """import os
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = torch.nn.Linear(4, 1)
if os.path.exists("weights.h5"):
    model.load_state_dict(torch.load("weights.h5"))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    torch.save(model.state_dict(), "weights.h5")
probe = torch.zeros(1).to(device)
"""


def test_a_model_never_moved_off_the_cpu_reloads_cpu_tensors():
    assert codes(lint_text(CPU_MODEL_RESUME, select="TD110")) == []
    moved = CPU_MODEL_RESUME.replace("probe = torch.zeros(1)", "model")
    assert codes(lint_text(moved, select="TD110")) == ["TD110"]
    built_on = CPU_MODEL_RESUME.replace("Linear(4, 1)", "Linear(4, 1, device=device)")
    assert codes(lint_text(built_on, select="TD110")) == ["TD110"]


# --- round 12's corpus review (ogb, improved-diffusion, minimalRL, deepspeech.pytorch) -------

EVALUATOR_SELF_TEST = """import numpy as np
import torch

if __name__ == "__main__":
    y_pred = torch.tensor(np.random.randn(100, 128))
    print(y_pred.mean())
"""


def test_random_arrays_of_a_module_self_test_are_one_copy_once():
    assert codes(lint_text(EVALUATOR_SELF_TEST, select="TD101")) == []
    per_item = EVALUATOR_SELF_TEST.replace(
        'if __name__ == "__main__":\n', "for step in range(1000):\n"
    )
    assert codes(lint_text(per_item, select="TD101")) == ["TD101"]


HELPER_CLEARS_GRADIENTS = """import torch
from .fp16_util import zero_grad

model = torch.nn.Linear(4, 1)
params = list(model.parameters())
opt = torch.optim.AdamW(params, lr=1e-3)
for step in range(100):
    zero_grad(params)
    model(torch.randn(8, 4)).pow(2).mean().backward()
    opt.step()
"""


def test_a_zero_grad_helper_function_clears_the_gradients():
    assert codes(lint_text(HELPER_CLEARS_GRADIENTS, select="TD125")) == []
    never = HELPER_CLEARS_GRADIENTS.replace("    zero_grad(params)\n", "")
    assert codes(lint_text(never, select="TD125")) == ["TD125"]


SMOKE_TEST_HARNESS = """import torch
from tests.smoke_test import SmokeTest


class PretrainedSmokeTest(SmokeTest):
    def test_pretrained_eval_inference(self):
        for url in ["an4.ckpt", "librispeech.ckpt"]:
            self.eval_model(model_path=url, cuda=False)
"""


def test_a_method_named_for_evaluating_a_model_is_not_a_model():
    assert codes(lint_text(SMOKE_TEST_HARNESS, select="TD106")) == []
    held = SMOKE_TEST_HARNESS.replace(
        "        for url", "        self.eval_model = torch.nn.Linear(4, 1)\n        for url"
    )
    assert codes(lint_text(held, select="TD106")) == ["TD106"]


PER_POSITION_HEADS = """import torch


def train(model, loader, optimizer, criterion):
    for batch in loader:
        pred_list = model(batch.x)
        loss = 0
        for i in range(len(pred_list)):
            loss += criterion(pred_list[i], batch.y[:, i])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


def test_len_of_a_model_output_walks_a_list_of_heads():
    assert codes(lint_text(PER_POSITION_HEADS, select="TD120")) == []
    rows = PER_POSITION_HEADS.replace("len(pred_list)", "pred_list.size(0)")
    assert codes(lint_text(rows, select="TD120")) == ["TD120"]


A3C_WORKER = """import torch

global_model = torch.nn.Linear(4, 2)
local_model = torch.nn.Linear(4, 2)
optimizer = torch.optim.Adam(global_model.parameters(), lr=1e-3)
for update in range(1000):
    loss = local_model(torch.randn(8, 4)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    for global_param, local_param in zip(global_model.parameters(), local_model.parameters()):
        global_param._grad = local_param.grad
    optimizer.step()
    local_model.load_state_dict(global_model.state_dict())
"""


def test_an_a3c_worker_pulls_the_shared_weights_after_each_update():
    assert codes(lint_text(A3C_WORKER, select="TD130")) == []
    target_net = A3C_WORKER.replace(
        "    for global_param, local_param in zip(global_model.parameters(), "
        "local_model.parameters()):\n        global_param._grad = local_param.grad\n",
        "",
    )
    assert codes(lint_text(target_net, select="TD130")) == ["TD130"]


CACHED_ADJACENCY = """import os
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = torch.nn.Linear(4, 1).to(device)
path = "adjacency.pt"
if os.path.exists(path):
    adj = torch.load(path)
else:
    adj = torch.randn(4, 4)
    torch.save(adj, path)
adj = adj.to(device)
"""


def test_a_cache_filled_in_the_other_branch_is_read_on_this_machine():
    assert codes(lint_text(CACHED_ADJACENCY, select="TD110")) == []
    not_cached = CACHED_ADJACENCY.replace("    torch.save(adj, path)\n", "")
    assert codes(lint_text(not_cached, select="TD110")) == ["TD110"]


EMBEDDING_READER = """import torch

x = torch.randn(10, 4)
embedding = torch.load("embedding.pt", map_location="cpu")
x = torch.cat([x, embedding], dim=-1)
"""
EMBEDDING_WRITER = """import torch

weight = torch.randn(10, 4)
torch.save(weight, "embedding.pt")
"""


def test_data_an_earlier_script_of_the_folder_writes_is_its_own(tmp_path):
    reader = tmp_path / "mlp.py"
    assert codes(lint_text(EMBEDDING_READER, select="TD111", path=str(reader))) == ["TD111"]
    (tmp_path / "node2vec.py").write_text(EMBEDDING_WRITER)
    assert codes(lint_text(EMBEDDING_READER, select="TD111", path=str(reader))) == []
    checkpoint = EMBEDDING_READER.replace("embedding.pt", "ckpt.pt")
    (tmp_path / "train.py").write_text(EMBEDDING_WRITER.replace("embedding.pt", "ckpt.pt"))
    assert codes(lint_text(checkpoint, select="TD111", path=str(reader))) == ["TD111"]


CLEARED_UNDER_THE_STEPS_CONDITION = """import torch


def train(model, opt, loader, k):
    for j, (x, y) in enumerate(loader):
        loss = model(x).sum()
        if (j + 1) % k == 0:
            opt.zero_grad()
        loss.backward()
        if (j + 1) % k == 0:
            opt.step()
"""


def test_gradients_cleared_under_the_steps_condition_before_backward_do_not_accumulate():
    # DLRM's mlperf accumulation: each step sees one backward's gradient, not k times too large
    assert codes(lint_text(CLEARED_UNDER_THE_STEPS_CONDITION, select="TD109")) == []
    stepped_then_cleared = CLEARED_UNDER_THE_STEPS_CONDITION.replace(
        "            opt.zero_grad()\n", "            opt.step()\n            opt.zero_grad()\n", 1
    )
    assert codes(lint_text(stepped_then_cleared, select="TD109")) == ["TD109"]


WEIGHTS_DRAWN_IN_NUMPY = """import numpy as np
import torch
from torch import nn


def create_mlp(sizes):
    layers = nn.ModuleList()
    for n, m in zip(sizes[:-1], sizes[1:]):
        layer = nn.Linear(n, m)
        w = np.random.normal(0.0, np.sqrt(2 / (m + n)), size=(m, n)).astype(np.float32)
        layer.weight.data = torch.tensor(w, requires_grad=True)
        layers.append(layer)
    return layers
"""


def test_initial_weights_drawn_in_numpy_are_converted_once():
    # DLRM builds every layer and embedding table this way: one copy while the model is built
    assert codes(lint_text(WEIGHTS_DRAWN_IN_NUMPY, select="TD101")) == []
    per_batch = WEIGHTS_DRAWN_IN_NUMPY.replace(
        "layer.weight.data = torch.tensor(", "x = torch.tensor("
    )
    assert codes(lint_text(per_batch, select="TD101")) == ["TD101"]


PROFILER_ON_A_FLAG = """import torch


def train(args, model, opt, loader):
    with torch.autograd.profiler.profile(args.enable_profiling, record_shapes=True) as prof:
        for x, y in loader:
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
"""


def test_a_profiler_enabled_by_a_profiling_flag_is_an_explicit_choice():
    # DLRM: `profile(args.enable_profiling, ...)`, as `if args.profile:` around the profiler
    assert codes(lint_text(PROFILER_ON_A_FLAG, select="TD134")) == []
    always = PROFILER_ON_A_FLAG.replace("args.enable_profiling, ", "")
    assert codes(lint_text(always, select="TD134")) == ["TD134"]
