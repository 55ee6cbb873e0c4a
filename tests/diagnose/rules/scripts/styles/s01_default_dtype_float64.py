"""Functional training step; the whole program runs in float64 through set_default_dtype.

Planted: torch.set_default_dtype(torch.float64) at import. --fixed: float32 default.
"""

import sys

import torch
import torch.nn.functional as F

if "--fixed" not in sys.argv:
    torch.set_default_dtype(torch.float64)


def init_params(sizes, gen):
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        w = (torch.randn(fan_in, fan_out, generator=gen) / fan_in**0.5).requires_grad_()
        b = torch.zeros(fan_out, requires_grad=True)
        params += [w, b]
    return params


class MLP(torch.nn.Module):
    def __init__(self, sizes):
        super().__init__()
        gen = torch.Generator().manual_seed(1)
        self.weights = torch.nn.ParameterList([torch.nn.Parameter(p) for p in init_params(sizes, gen)])

    def forward(self, x):
        params = list(self.weights)
        for i in range(0, len(params), 2):
            x = x @ params[i] + params[i + 1]
            if i < len(params) - 2:
                x = F.gelu(x)
        return x


def train_step(net, opt, batch):
    features, target = batch
    opt.zero_grad(set_to_none=True)
    loss = F.mse_loss(net(features).squeeze(-1), target)
    loss.backward()
    opt.step()
    return loss.detach()


def run():
    gen = torch.Generator().manual_seed(0)
    features = torch.randn(6144, 256, generator=gen)
    target = features[:, :8].sum(1)
    net = MLP([256, 512, 512, 1])
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, foreach=True)
    for epoch in range(4):
        total = torch.zeros(())
        for batch in zip(features.split(128), target.split(128)):
            total += train_step(net, opt, batch)
        print(f"epoch {epoch} mse {total.item() / 48:.4f}")


if __name__ == "__main__":
    run()
