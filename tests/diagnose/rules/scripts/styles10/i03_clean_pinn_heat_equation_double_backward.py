"""Clean: a physics-informed network for the 1-D heat equation: collocation points drawn with
`torch.rand` each step, u_t and u_xx taken with `torch.autograd.grad(..., create_graph=True)`
(the double backward is the method, not a mistake), an initial-condition term, Adam.

No planted problem; `--fixed` changes nothing (kept for the bench's control run).
"""

import math

import torch
from torch import nn

K, N = 0.1, 2048

if __name__ == "__main__":
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(2, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(),
                        nn.Linear(64, 1))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    x0 = torch.linspace(-1, 1, 256).unsqueeze(1)
    u0 = torch.sin(math.pi * x0)
    scale, shift = torch.tensor([2.0, 1.0]), torch.tensor([1.0, 0.0])
    for step in range(500):
        xt = (torch.rand(N, 2) * scale - shift).requires_grad_(True)
        u = net(xt)
        du = torch.autograd.grad(u.sum(), xt, create_graph=True)[0]
        u_x, u_t = du[:, :1], du[:, 1:]
        u_xx = torch.autograd.grad(u_x.sum(), xt, create_graph=True)[0][:, :1]
        loss = (u_t - K * u_xx).pow(2).mean()
        loss = loss + (net(torch.cat([x0, torch.zeros_like(x0)], 1)) - u0).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(step, loss.item())
