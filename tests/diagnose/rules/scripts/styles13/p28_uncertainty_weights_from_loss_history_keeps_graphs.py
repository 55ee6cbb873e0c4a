"""Multi-task learning with dynamic loss weights: each task's weight is the inverse of its
recent mean loss (a "loss balancing" scheme), computed from a per-task history of losses.

Planted: the history appends each task's loss tensor as is (`history[k].append(loss_k)`), not a
detached number: every step keeps its whole graph (activations included) alive in the lists,
and memory grows step after step. --fixed: `history[k].append(loss_k.item())`.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU())
        self.cls = nn.Linear(256, 5)
        self.reg = nn.Linear(256, 1)

    def forward(self, x):
        z = self.trunk(x)
        return self.cls(z), self.reg(z)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(8192, 64)
    y_cls, y_reg = x[:, :5].argmax(1), x[:, 5:6] * 3
    model = TwoHeads()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    history = {"cls": [], "reg": []}
    for epoch in range(3):
        for idx in torch.randperm(len(x)).split(128):
            out_cls, out_reg = model(x[idx])
            terms = {
                "cls": nn.functional.cross_entropy(out_cls, y_cls[idx]),
                "reg": nn.functional.mse_loss(out_reg, y_reg[idx]),
            }
            for k, term in terms.items():
                history[k].append(term.item() if FIXED else term)
            weights = {
                k: 1.0 / (float(sum(h[-20:])) / len(h[-20:]) + 1e-3) for k, h in history.items()
            }
            loss = sum(weights[k] * terms[k] for k in terms)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
