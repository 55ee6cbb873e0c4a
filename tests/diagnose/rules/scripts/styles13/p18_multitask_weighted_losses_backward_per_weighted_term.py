"""A multi-task model (shared trunk, a classification head, a regression head and a
reconstruction head) with fixed loss weights read from a dict (`{"cls": 1.0, "reg": 0.5,
"rec": 0.1}`), and a loop over the weighted terms.

Planted: the loop calls `(weight * term).backward(retain_graph=True)` once per task: three
backward passes through the shared trunk per step, where the sum of the weighted terms has the
same gradients in one backward. --fixed: `sum(weighted terms).backward()`.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
WEIGHTS = {"cls": 1.0, "reg": 0.5, "rec": 0.1}


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(
            nn.Linear(64, 512),
            nn.ReLU(),
            nn.Linear(512, 512),
            nn.ReLU(),
            nn.Linear(512, 512),
            nn.ReLU(),
        )
        self.heads = nn.ModuleDict(
            {"cls": nn.Linear(512, 4), "reg": nn.Linear(512, 1), "rec": nn.Linear(512, 64)}
        )

    def forward(self, x):
        z = self.trunk(x)
        return {k: head(z) for k, head in self.heads.items()}


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(4096, 64)
    targets = {"cls": x[:, :4].argmax(1), "reg": x[:, :1] * 2, "rec": x}
    losses = {
        "cls": nn.functional.cross_entropy,
        "reg": nn.functional.mse_loss,
        "rec": nn.functional.mse_loss,
    }
    model = MultiTask()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        for idx in torch.randperm(len(x)).split(128):
            out = model(x[idx])
            terms = {k: WEIGHTS[k] * losses[k](out[k], targets[k][idx]) for k in WEIGHTS}
            opt.zero_grad()
            if FIXED:
                sum(terms.values()).backward()
            else:
                for term in terms.values():
                    term.backward(retain_graph=True)
            opt.step()
        print("epoch", epoch, float(sum(terms.values())))
