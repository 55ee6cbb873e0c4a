"""Patterns from round 14's new corpus repositories that rules must leave alone, each next to
the form the rule must still flag."""

from __future__ import annotations

from lint_helpers import codes, lint_text

METER_PRINT = """import torch


class AverageMeter:
    def update(self, value):
        self.val = value


def train(model, loader, opt):
    losses = AverageMeter()
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.update(loss.item())
        print("Loss {loss.val:.4f}".format(loss=losses))
"""


def test_a_format_keyword_named_loss_is_not_the_loss_tensor():
    # `loss=` names the keyword; the value printed is a meter of Python floats
    found = lint_text(METER_PRINT, select="TD116").violations
    assert [v.line for v in found] == [16]  # the .item() read only
    printed = METER_PRINT.replace("format(loss=losses)", "format(loss=loss)")
    assert [v.line for v in lint_text(printed, select="TD116").violations] == [16, 17]


DECODER_INFERENCE = """import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.prenet = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5))
        self.cell = nn.GRUCell(8, 8)

    def inference(self, h):
        outputs = []
        x = torch.zeros_like(h)
        while len(outputs) < 10:
            h = self.cell(self.prenet(x), h)
            outputs.append(h)
            x = h
        return torch.stack(outputs)


class Runner:
    def __init__(self):
        self.model = Decoder()

    def inference(self, h):
        outputs = []
        for _ in range(10):
            h = self.model(h)
            outputs.append(h)
        return outputs
"""


def test_a_modules_own_inference_loop_leaves_the_mode_to_its_caller():
    # the Decoder's method is the model's own; the Runner's loop runs the model and is flagged
    found = lint_text(DECODER_INFERENCE, select="TD107").violations
    assert [v.line for v in found] == [25]


RECORDS_PER_ROW = """import torch


def collect(outputs, video_ids, segments, results):
    outputs = torch.softmax(outputs, dim=1)
    for j in range(outputs.size(0)):
        results[video_ids[j]].append({"segment": segments[j], "output": outputs[j]})
    return results


def rows(outputs, kept):
    outputs = torch.softmax(outputs, dim=1)
    for j in range(outputs.size(0)):
        kept.append(outputs[j] * 2)
    return kept
"""


def test_a_python_record_per_row_is_not_a_row_computation():
    # the first loop writes results out (dicts keyed by a Python value); the second computes
    found = lint_text(RECORDS_PER_ROW, select="TD120").violations
    assert [v.line for v in found] == [13]


CPU_WEIGHTS_PER_EPOCH = """import os

import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
if os.path.exists("weights/net_epoch_10.pt"):
    model.load_state_dict(torch.load("weights/net_epoch_10.pt"))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    loss = model(torch.randn(8, 4)).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    torch.save(model.state_dict(), os.path.join("weights", f"net_epoch_{epoch + 1}.pt"))
"""


def test_a_load_of_one_of_the_cpu_models_per_epoch_files_keeps_its_device():
    # the file fits the f-string name the loop saves under, and the model never leaves the CPU
    assert codes(lint_text(CPU_WEIGHTS_PER_EPOCH, select="TD110")) == []
    on_gpu = CPU_WEIGHTS_PER_EPOCH.replace("nn.Linear(8, 2))\n", "nn.Linear(8, 2)).cuda()\n")
    assert codes(lint_text(on_gpu, select="TD110")) == ["TD110"]
    # a name the f-string cannot write, or one with no stem (`f"{epoch}.pt"`), is not matched
    other = CPU_WEIGHTS_PER_EPOCH.replace('f"net_epoch_', 'f"head_epoch_')
    assert codes(lint_text(other, select="TD110")) == ["TD110"]
    no_stem = CPU_WEIGHTS_PER_EPOCH.replace('f"net_epoch_{epoch + 1}.pt"', 'f"{epoch}.pt"')
    assert codes(lint_text(no_stem, select="TD110")) == ["TD110"]
    # TD111 still asks for weights_only: the wildcard does not prove the file is this one
    assert codes(lint_text(CPU_WEIGHTS_PER_EPOCH, select="TD111")) == ["TD111"]


PROCESSED_BY_ITS_OWN_DOWNLOAD = """import os
import urllib.request

import torch


class Digits(torch.utils.data.Dataset):
    processed = "processed.pt"

    def __init__(self, root):
        self.root = root
        if not os.path.exists(os.path.join(self.root, self.processed)):
            self.download()
        self.data, self.labels = torch.load(os.path.join(self.root, self.processed))

    def download(self):
        raw = os.path.join(self.root, "raw.bin")
        with open(raw, "wb") as f:
            f.write(urllib.request.urlopen("https://example.org/raw.bin").read())
        data = torch.randn(10, 4)
        with open(os.path.join(self.root, self.processed), "wb") as f:
            torch.save((data, torch.zeros(10)), f)
"""


def test_a_file_saved_through_the_second_of_two_open_handles_of_one_name_is_its_own():
    # `f` is bound twice: the save writes through the `with` around it, not the first one
    assert codes(lint_text(PROCESSED_BY_ITS_OWN_DOWNLOAD, select="TD111")) == []
    elsewhere = PROCESSED_BY_ITS_OWN_DOWNLOAD.replace(
        'os.path.join(self.root, self.processed), "wb"', 'raw + ".pt", "wb"'
    )
    assert codes(lint_text(elsewhere, select="TD111")) == ["TD111"]


CACHED_STAGES = """import os

import torch


def prepare(root):
    path = f"{root}/symmetric.pt"
    if not os.path.exists(path):
        torch.save(torch.randn(4, 4), path)
    path = f"{root}/merged.pt"
    if not os.path.exists(path):
        adj = torch.load(f"{root}/symmetric.pt")
        torch.save(adj + adj.t(), path)
"""


def test_a_cache_this_function_wrote_under_a_rebound_path_name_is_its_own():
    # `path` names two files in turn; the load reads the first, saved above it
    assert codes(lint_text(CACHED_STAGES, select="TD111")) == []
    other = CACHED_STAGES.replace(
        'torch.load(f"{root}/symmetric.pt")', 'torch.load(f"{root}/x.pt")'
    )
    assert codes(lint_text(other, select="TD111")) == ["TD111"]


NO_MODE_LAYERS = '''"""Scores a plain MLP (no Dropout, no BatchNorm) on a validation split."""

import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))  # nothing like Dropout here


def validate(model, batches):
    total = 0.0
    for x, y in batches:
        total += nn.functional.cross_entropy(model(x), y)
    return total


score = validate(model, [(torch.randn(2, 4), torch.tensor([0, 1]))])
'''


def test_mode_words_in_docstrings_and_comments_are_not_layers(tmp_path):
    # a file whose model can have no dropout or BatchNorm needs no eval(); its prose says so
    script = tmp_path / "score.py"
    script.write_text(NO_MODE_LAYERS)
    assert codes(lint_text(NO_MODE_LAYERS, select="TD107", path=str(script))) == []
    built = NO_MODE_LAYERS.replace("nn.ReLU(),", "nn.ReLU(), nn.Dropout(0.1),")
    script.write_text(built)
    assert codes(lint_text(built, select="TD107", path=str(script))) == ["TD107"]
