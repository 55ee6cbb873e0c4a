"""Functional training with `torch.func`: the model's parameters are pulled out into a dict,
the loss is a pure function of that dict (`functional_call`), `torch.func.grad_and_value` gives
the gradients and a hand-written SGD-with-momentum update builds the next dict. A small MLP
classifier on generated data.

Planted: the parameter dict is made with `{k: v.detach().double() ...}` "for a stable update",
and the inputs are cast to match, so every forward and backward runs in float64.
--fixed: the parameters stay float32.
"""

import sys

import torch
from torch import nn
from torch.func import functional_call, grad_and_value

FIXED = "--fixed" in sys.argv
DTYPE = torch.float32 if FIXED else torch.float64

if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(96, 384), nn.Tanh(), nn.Linear(384, 384), nn.Tanh(),
                          nn.Linear(384, 10))
    params = {k: v.detach().to(DTYPE) for k, v in model.named_parameters()}
    velocity = {k: torch.zeros_like(v) for k, v in params.items()}
    x = torch.randn(8000, 96)
    y = (x[:, :10].argmax(1)).long()

    def loss_fn(p, xb, yb):
        return nn.functional.cross_entropy(functional_call(model, p, (xb,)), yb)

    step_fn = grad_and_value(loss_fn)
    for epoch in range(3):
        perm = torch.randperm(len(x))
        for start in range(0, len(x), 128):
            idx = perm[start : start + 128]
            grads, loss = step_fn(params, x[idx].to(DTYPE), y[idx])
            with torch.no_grad():
                for k in params:
                    velocity[k] = 0.9 * velocity[k] + grads[k]
                    params[k] = params[k] - 0.05 * velocity[k]
        print("epoch", epoch, float(loss))
