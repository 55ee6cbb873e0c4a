"""Multi-task model for tabular data (a shared encoder, a churn head and a spend head, the loss
weighted by uncertainty weights learned with the model), configured by a plain dict `CONFIG`
merged with command-line `key=value` overrides.

Planted: `CONFIG["debug"]` defaults to True and turns on `torch.autograd.set_detect_anomaly` for
the whole run (it was switched on to hunt a NaN and never switched off). --fixed: debug=False.
"""

import sys

import torch
from torch import nn

CONFIG = {"debug": "--fixed" not in sys.argv, "epochs": 3, "batch": 128, "lr": 1e-3}


class UncertaintyWeighted(nn.Module):
    def __init__(self, d_in=40):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d_in, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU())
        self.churn = nn.Linear(128, 1)
        self.spend = nn.Linear(128, 1)
        self.log_vars = nn.Parameter(torch.zeros(2))

    def forward(self, x, churned, spent):
        h = self.enc(x)
        l1 = nn.functional.binary_cross_entropy_with_logits(self.churn(h).squeeze(1), churned)
        l2 = nn.functional.mse_loss(self.spend(h).squeeze(1), spent)
        w = torch.exp(-self.log_vars)
        return w[0] * l1 + w[1] * l2 + self.log_vars.sum()


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        if "=" in arg:
            k, v = arg.split("=", 1)
            CONFIG[k] = type(CONFIG[k])(v)
    torch.autograd.set_detect_anomaly(CONFIG["debug"])
    torch.manual_seed(0)
    x = torch.randn(20000, 40)
    churned = (x[:, 0] + x[:, 1] > 0).float()
    spent = x[:, 2:6].sum(1)
    model = UncertaintyWeighted()
    opt = torch.optim.Adam(model.parameters(), lr=CONFIG["lr"])
    for epoch in range(CONFIG["epochs"]):
        for idx in torch.randperm(len(x)).split(CONFIG["batch"]):
            loss = model(x[idx], churned[idx], spent[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())
