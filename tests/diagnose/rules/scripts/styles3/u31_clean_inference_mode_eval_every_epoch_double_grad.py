"""CLEAN: a physics-informed regression: the loss includes the derivative of the output with
respect to the input (torch.autograd.grad with create_graph=True, then one backward), a
deliberate `retain_graph=True` on an auxiliary autograd.grad call whose graph is reused by the
loss; validation under inference_mode in eval mode once per epoch. Nothing is planted
(`--fixed` changes nothing).
"""

import torch
from torch import nn


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(1, 128), nn.Tanh(), nn.Linear(128, 128), nn.Tanh(),
                          nn.Linear(128, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x_all = torch.linspace(-3, 3, 25600)[:, None]
    for epoch in range(3):
        model.train()
        for xb in x_all[torch.randperm(len(x_all))].split(128):
            xb = xb.clone().requires_grad_(True)
            u = model(xb)
            du, = torch.autograd.grad(u.sum(), xb, create_graph=True, retain_graph=True)
            loss = ((du - torch.cos(xb)) ** 2).mean() + (u.mean() - 0.0) ** 2
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        model.eval()
        with torch.inference_mode():
            err = (model(x_all) - torch.sin(x_all)).abs().mean()
        print(epoch, err.item())


if __name__ == "__main__":
    main()
