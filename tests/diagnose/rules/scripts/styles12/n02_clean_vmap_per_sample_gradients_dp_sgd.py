"""A clean control: differentially-private-SGD-style training with per-sample gradients computed
by `torch.func.vmap(torch.func.grad(...))` over `functional_call`, each sample's gradient
clipped, summed with Gaussian noise and applied by hand (no optimizer, no `.backward()`).
Batches of 256. Nothing is planted; `--fixed` runs the same program.
"""

import torch
from torch import nn
from torch.func import functional_call, grad, vmap

if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(10000, 32)
    y = (x[:, :3].sum(1) > 0).long()
    model = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 2))
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss_of(p, xi, yi):
        out = functional_call(model, p, (xi[None],))
        return nn.functional.cross_entropy(out, yi[None])

    per_sample = vmap(grad(loss_of), in_dims=(None, 0, 0))
    clip, sigma, lr = 1.0, 0.5, 0.5
    for epoch in range(3):
        for idx in torch.randperm(len(x)).split(256):
            grads = per_sample(params, x[idx], y[idx])
            norms = torch.sqrt(sum(g.flatten(1).pow(2).sum(1) for g in grads.values()))
            scale = (clip / (norms + 1e-6)).clamp(max=1.0)
            for k, g in grads.items():
                noisy = (g * scale.view(-1, *[1] * (g.dim() - 1))).sum(0)
                noisy = noisy + sigma * clip * torch.randn_like(noisy)
                params[k] = params[k] - lr * noisy / len(idx)
        with torch.no_grad():
            acc = (functional_call(model, params, (x,)).argmax(1) == y).float().mean()
        print("epoch", epoch, float(acc))
