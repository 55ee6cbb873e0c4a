"""A physics-informed network (PINN) for the 1-D heat equation u_t = k u_xx: each step draws
collocation points in the domain, takes u_t and u_xx with `torch.autograd.grad(...,
create_graph=True)`, and minimises the PDE residual plus the initial and boundary conditions.

Planted: the 2048 collocation points are drawn by a Python list comprehension over
`random.uniform` and turned into a tensor every step (`torch.tensor([[x, t] for ...])`): 4096
Python floats per step. --fixed: `torch.rand(2048, 2)` scaled to the domain.
"""

import math
import random
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
K, N = 0.1, 2048


def collocation():
    if FIXED:
        return torch.rand(N, 2) * torch.tensor([2.0, 1.0]) - torch.tensor([1.0, 0.0])
    return torch.tensor([[random.uniform(-1, 1), random.uniform(0, 1)] for _ in range(N)])


if __name__ == "__main__":
    torch.manual_seed(0)
    random.seed(0)
    net = nn.Sequential(nn.Linear(2, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(),
                        nn.Linear(64, 1))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    x0 = torch.linspace(-1, 1, 256).unsqueeze(1)
    u0 = torch.sin(math.pi * x0)
    for step in range(400):
        xt = collocation().requires_grad_(True)
        u = net(xt)
        du = torch.autograd.grad(u.sum(), xt, create_graph=True)[0]
        u_x, u_t = du[:, :1], du[:, 1:]
        u_xx = torch.autograd.grad(u_x.sum(), xt, create_graph=True)[0][:, :1]
        residual = (u_t - K * u_xx).pow(2).mean()
        initial = (net(torch.cat([x0, torch.zeros_like(x0)], 1)) - u0).pow(2).mean()
        loss = residual + initial
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(step, loss.item())
