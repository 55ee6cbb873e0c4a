"""MAML-style meta-learning on sine regression: for each task in a meta-batch the inner loop
takes two functional SGD steps with `torch.autograd.grad(create_graph=True)` (torch.func
style), and the query losses are averaged and backpropagated into the meta-parameters. The
outer loop calls `meta_opt.step()` but the author forgot `meta_opt.zero_grad()`.

Planted: the meta-gradients are never cleared (each meta-step adds to all previous ones).
--fixed: meta_opt.zero_grad() before each meta-batch.
"""

import sys

import torch
from torch import nn
from torch.func import functional_call

FIXED = "--fixed" in sys.argv


def sample_task(n=20):
    amp, phase = torch.rand(1) * 4 + 0.1, torch.rand(1) * 3.14
    x = torch.rand(2 * n, 1) * 10 - 5
    y = amp * torch.sin(x + phase)
    return (x[:n], y[:n]), (x[n:], y[n:])


def adapt(model, params, support, inner_lr=0.01, steps=2):
    x, y = support
    for _ in range(steps):
        loss = nn.functional.mse_loss(functional_call(model, params, (x,)), y)
        grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)
        params = {name: p - inner_lr * g for (name, p), g in zip(params.items(), grads)}
    return params


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(1, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                          nn.Linear(64, 1))
    meta_opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for meta_step in range(150):
        if FIXED:
            meta_opt.zero_grad()
        query_losses = []
        for _ in range(4):
            support, (xq, yq) = sample_task()
            fast = adapt(model, dict(model.named_parameters()), support)
            query_losses.append(nn.functional.mse_loss(functional_call(model, fast, (xq,)), yq))
        torch.stack(query_losses).mean().backward()
        meta_opt.step()
        if meta_step % 50 == 0:
            print(meta_step, float(torch.stack(query_losses).mean()))


if __name__ == "__main__":
    main()
