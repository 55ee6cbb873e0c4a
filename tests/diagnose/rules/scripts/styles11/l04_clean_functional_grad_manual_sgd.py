"""A clean program in a functional style: parameters live in a dict, the loss is computed with
`torch.func.functional_call`, gradients with `torch.func.grad`, and a hand-written momentum SGD
updates the dict with `torch._foreach_*` ops. No optimizer object, no `.backward()`.
--fixed: same program.
"""

import torch
from torch import nn
from torch.func import functional_call, grad


def make_loss(model):
    def loss_fn(params, xb, yb):
        return nn.functional.cross_entropy(functional_call(model, params, (xb,)), yb)
    return loss_fn


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(20000, 48)
    y = (x[:, :6].sum(1) > 0).long()
    model = nn.Sequential(nn.Linear(48, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 2))
    params = {k: v.detach().clone() for k, v in model.named_parameters()}
    momenta = {k: torch.zeros_like(v) for k, v in params.items()}
    loss_fn = make_loss(model)
    grad_fn = grad(loss_fn)
    names = list(params)
    for step in range(500):
        idx = torch.randint(0, len(x), (256,))
        g = grad_fn(params, x[idx], y[idx])
        bufs = [momenta[n] for n in names]
        torch._foreach_mul_(bufs, 0.9)
        torch._foreach_add_(bufs, [g[n] for n in names])
        torch._foreach_add_([params[n] for n in names], bufs, alpha=-0.05)
        if step % 100 == 0:
            with torch.no_grad():
                print(step, float(loss_fn(params, x[idx], y[idx])))
