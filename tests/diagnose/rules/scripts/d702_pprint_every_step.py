"""D702 through pprint: a metrics dict of tensors (losses, per-layer gradient norms) pretty-printed
with `pprint.pprint` every step; pprint writes to the stream itself, never calling print()."""

import pprint

import torch
from torch import nn

if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(4096, 16)
    y = x[:, :2].sum(1, keepdim=True)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                          nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(300):
        idx = torch.randint(0, len(x), (32,))
        loss = nn.functional.mse_loss(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        pprint.pprint({"step": step, "loss": loss.detach(),
                       "grad_norms": {n: p.grad.norm() for n, p in model.named_parameters()}})
