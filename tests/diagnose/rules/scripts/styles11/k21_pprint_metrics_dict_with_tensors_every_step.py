"""A multitask model (a shared trunk, a classification head and a regression head, losses
weighted by learned uncertainty) on generated tabular data. Metrics are gathered in a nested
dict per step: per-task losses, the uncertainty weights, per-layer gradient norms.

Planted: the step ends with `pprint.pprint(metrics)` on that dict, whose values are tensors
(their reprs are formatted, the weights' too), every step. --fixed: the metrics are printed
every 100 steps, as floats.
"""

import pprint
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU())
        self.cls = nn.Linear(256, 5)
        self.reg = nn.Linear(256, 1)
        self.log_vars = nn.Parameter(torch.zeros(2))

    def forward(self, x):
        h = self.trunk(x)
        return self.cls(h), self.reg(h)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(10000, 32)
    yc = (x[:, 0] * 2).long().clamp(-2, 2) + 2
    yr = x[:, 1:3].sum(1, keepdim=True)
    model = MultiTask()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(600):
        idx = torch.randint(0, len(x), (128,))
        logits, pred = model(x[idx])
        lc = nn.functional.cross_entropy(logits, yc[idx])
        lr_ = nn.functional.mse_loss(pred, yr[idx])
        w = torch.exp(-model.log_vars)
        loss = w[0] * lc + w[1] * lr_ + model.log_vars.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        metrics = {
            "step": step,
            "loss": {"cls": lc.detach(), "reg": lr_.detach(), "total": loss.detach()},
            "weights": w.detach(),
            "grad_norms": {n: p.grad.norm() for n, p in model.trunk.named_parameters()},
        }
        if not FIXED:
            pprint.pprint(metrics)
        elif step % 100 == 0:
            pprint.pprint({"step": step, "loss": float(loss), "weights": w.tolist()})
