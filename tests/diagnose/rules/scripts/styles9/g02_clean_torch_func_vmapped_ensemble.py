"""Clean: an ensemble of five small MLPs trained at once with `torch.func`: `stack_module_state`
stacks their parameters, `vmap(functional_call)` runs all five on the same batch, and one Adam
optimizer updates the stacked parameters (leaf tensors). Each member sees its own bootstrap
batch.

No planted problem; `--fixed` changes nothing (kept for the bench's control run).
"""

import copy

import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

MEMBERS = 5

if __name__ == "__main__":
    torch.manual_seed(0)
    models = [nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 1)) for _ in range(MEMBERS)]
    params, buffers = stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")

    def member(p, b, xb):
        return functional_call(base, (p, b), (xb,))

    ensemble = vmap(member)
    opt = torch.optim.Adam(params.values(), lr=1e-3)
    x = torch.randn(8000, 10)
    y = (x[:, :3] ** 2).sum(1, keepdim=True)
    for epoch in range(3):
        for _ in range(60):
            idx = torch.randint(0, len(x), (MEMBERS, 128))
            pred = ensemble(params, buffers, x[idx])
            loss = nn.functional.mse_loss(pred, y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
