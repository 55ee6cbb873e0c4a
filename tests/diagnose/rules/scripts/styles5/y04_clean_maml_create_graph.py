"""CLEAN: MAML on sine regression with functional inner steps (`autograd.grad(create_graph=True)`)
and a meta-optimizer cleared before every meta-batch. Nothing is planted (`--fixed` changes
nothing).
"""

import torch
from torch import nn
from torch.func import functional_call


def sample_task(n=20):
    amp, phase = torch.rand(1) * 4 + 0.1, torch.rand(1) * 3.14
    x = torch.rand(2 * n, 1) * 10 - 5
    y = amp * torch.sin(x + phase)
    return (x[:n], y[:n]), (x[n:], y[n:])


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(1, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                          nn.Linear(64, 1))
    meta_opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for meta_step in range(150):
        meta_opt.zero_grad()
        total = 0.0
        for _ in range(4):
            (xs, ys), (xq, yq) = sample_task()
            params = dict(model.named_parameters())
            for _ in range(2):
                inner = nn.functional.mse_loss(functional_call(model, params, (xs,)), ys)
                grads = torch.autograd.grad(inner, list(params.values()), create_graph=True)
                params = {k: p - 0.01 * g for (k, p), g in zip(params.items(), grads)}
            total = total + nn.functional.mse_loss(functional_call(model, params, (xq,)), yq)
        (total / 4).backward()
        meta_opt.step()
        if meta_step % 50 == 0:
            print(meta_step, float(total) / 4)


if __name__ == "__main__":
    main()
