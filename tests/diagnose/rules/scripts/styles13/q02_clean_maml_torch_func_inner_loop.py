"""Clean: MAML on sine-wave regression tasks with `torch.func`: the inner loop adapts a dict of
parameters with `torch.func.grad` of a `functional_call` loss (3 inner steps, second-order), the
outer loss over a meta-batch of tasks is averaged and backpropagated once per meta-step.
The per-task loop is the algorithm, not a Python loop of tiny ops over data.
(`--fixed` changes nothing.)
"""

import torch
from torch import nn
from torch.func import functional_call, grad


def task_batch(g, tasks=8, shots=64):
    amp = torch.rand(tasks, 1, 1, generator=g) * 4 + 1
    phase = torch.rand(tasks, 1, 1, generator=g) * 3
    x = torch.rand(tasks, 2 * shots, 1, generator=g) * 10 - 5
    return (
        x[:, :shots],
        amp * torch.sin(x[:, :shots] + phase),
        x[:, shots:],
        amp * torch.sin(x[:, shots:] + phase),
    )


if __name__ == "__main__":
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    model = nn.Sequential(
        nn.Linear(1, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 1)
    )
    meta_opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)

    def inner_loss(params, x, y):
        return nn.functional.mse_loss(functional_call(model, params, (x,)), y)

    inner_grad = grad(inner_loss)
    for step in range(300):
        sx, sy, qx, qy = task_batch(g)
        outer = 0.0
        for t in range(len(sx)):
            params = dict(model.named_parameters())
            for _ in range(3):
                grads = inner_grad(params, sx[t], sy[t])
                params = {k: p - 0.01 * grads[k] for k, p in params.items()}
            outer = outer + inner_loss(params, qx[t], qy[t])
        meta_opt.zero_grad(set_to_none=True)
        (outer / len(sx)).backward()
        meta_opt.step()
        if step % 50 == 0:
            print(step, float(outer) / len(sx))
