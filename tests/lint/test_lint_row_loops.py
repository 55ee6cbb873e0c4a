"""TD120's forms from the planted sets it missed before round 13 (a recall of 1/14): rows
written one at a time into a tensor, loops along dimension 1 (`x[:, t]`), the inputs of a
module's `forward` and an autograd Function's `backward`; each next to the loop it must leave
alone (a recurrence, a loop over a list of layers, code after a `return`)."""

from __future__ import annotations

from lint_helpers import lint_text

BACKWARD_ROW_LOOP = """import torch


class SoftClip(torch.autograd.Function):
    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        out = torch.empty_like(grad)
        for i in range(grad.shape[0]):
            t = torch.tanh(x[i])
            out[i] = grad[i] * (1 - t * t)
        return out
"""


def lines(source: str) -> list[int]:
    return [v.line for v in lint_text(source, select="TD120").violations]


def test_rows_written_one_at_a_time_from_a_backward_input_are_flagged_not_a_recurrence():
    assert lines(BACKWARD_ROW_LOOP) == [9]
    # a recurrence is not one vectorized op
    scan = BACKWARD_ROW_LOOP.replace(
        "            t = torch.tanh(x[i])\n            out[i] = grad[i] * (1 - t * t)\n",
        "            out[i] = grad[i] + 0.9 * out[i - 1]\n",
    )
    assert lines(scan) == []
    carried = BACKWARD_ROW_LOOP.replace(
        "            t = torch.tanh(x[i])\n            out[i] = grad[i] * (1 - t * t)\n",
        "            acc = grad[i] + 0.9 * acc\n            out[i] = acc\n",
    )
    assert lines(carried) == []
    # code after a `return` never runs
    dead = BACKWARD_ROW_LOOP.replace(
        "        out = torch.empty_like(grad)\n",
        "        return grad * 2\n        out = torch.empty_like(grad)\n",
    )
    assert lines(dead) == []


MODULE_LOOPS = """import torch
from torch import nn


class Pool(nn.Module):
    def forward(self, seq, dst, messages):
        pooled = torch.zeros_like(seq[:, 0])
        for t in range(seq.size(1)):
            pooled = pooled + seq[:, t]
        agg = torch.zeros_like(messages)
        for e in range(len(dst)):
            agg[dst[e]] = agg[dst[e]] + messages[e]
        deg = torch.zeros(100)
        for node in range(100):
            deg[node] = (dst == node).sum()
        return pooled, agg, deg


class Encoder(nn.Module):
    def forward(self, x):
        total = 0
        for i in range(x.shape[1]):
            total += self.embeddings[i](x[:, i])
        return total
"""


def test_loops_along_a_dimension_and_per_element_writes_in_forward_are_flagged():
    # the last loop calls a different layer per column (one embedding per feature): left alone
    assert lines(MODULE_LOOPS) == [8, 11, 14]
    recurrent = MODULE_LOOPS.replace(
        "            pooled = pooled + seq[:, t]\n",
        "            h = torch.tanh(seq[:, t] + h)\n            outs.append(h)\n",
    )
    # a state carried from step to step is a recurrence (TD135's cells), not independent rows
    assert lines(recurrent) == [12, 15]


PER_SAMPLE_MIXUP = """import torch
from torch.nn import functional as F


def mixup(x, y):
    perm = torch.randperm(len(x))
    xs = []
    for i in range(len(x)):
        lam = torch.rand(())
        xs.append(lam * x[i] + (1 - lam) * x[perm[i]])
    return torch.stack(xs), y


def main(model, opt):
    x, y = torch.randn(640, 50), torch.randint(0, 8, (640,))
    for xb, yb in zip(x.split(64), y.split(64)):
        xm, ym = mixup(xb, yb)
        loss = F.cross_entropy(model(xm), ym)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


def test_a_helpers_parameter_given_a_batch_split_from_a_tensor_is_a_tensor():
    # `xb` takes its items from `x.split(64)`, `x` unpacked from a tuple of torch calls
    assert [v.line for v in lint_text(PER_SAMPLE_MIXUP, select="TD120").violations] == [8]
    listed = PER_SAMPLE_MIXUP.replace("zip(x.split(64), y.split(64))", "zip(x.tolist(), y)")
    assert lint_text(listed, select="TD120").violations == []
