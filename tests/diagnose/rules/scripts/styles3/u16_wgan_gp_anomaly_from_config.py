"""WGAN-GP configured from a nested dict (a Hydra-like config); `debug.detect_anomaly` was left
True after chasing a NaN in the gradient penalty, so autograd's anomaly mode checks every
backward (the double backward of the penalty included).

Planted: torch.autograd.set_detect_anomaly(True) for the whole run. --fixed: the flag is off.
"""

import sys

import torch
from torch import nn

CONFIG = {
    "model": {"latent": 16, "width": 128, "features": 32},
    "optim": {"lr": 1e-4, "betas": (0.0, 0.9), "n_critic": 5, "gp_weight": 10.0},
    "debug": {"detect_anomaly": "--fixed" not in sys.argv},
}


def gradient_penalty(critic, real, fake):
    eps = torch.rand(len(real), 1)
    mixed = (eps * real + (1 - eps) * fake).requires_grad_(True)
    grad, = torch.autograd.grad(critic(mixed).sum(), mixed, create_graph=True)
    return ((grad.norm(2, dim=1) - 1) ** 2).mean()


def train(cfg):
    torch.autograd.set_detect_anomaly(cfg["debug"]["detect_anomaly"])
    m, o = cfg["model"], cfg["optim"]
    gen = nn.Sequential(nn.Linear(m["latent"], m["width"]), nn.ReLU(),
                        nn.Linear(m["width"], m["features"]))
    critic = nn.Sequential(nn.Linear(m["features"], m["width"]), nn.LeakyReLU(0.2),
                           nn.Linear(m["width"], m["width"]), nn.LeakyReLU(0.2),
                           nn.Linear(m["width"], 1))
    opt_g = torch.optim.Adam(gen.parameters(), lr=o["lr"], betas=o["betas"])
    opt_c = torch.optim.Adam(critic.parameters(), lr=o["lr"], betas=o["betas"])
    data = torch.randn(12800, m["features"]) * 0.5 + 1.0
    for epoch in range(3):
        for i, real in enumerate(data.split(64)):
            fake = gen(torch.randn(len(real), m["latent"])).detach()
            loss_c = (critic(fake).mean() - critic(real).mean()
                      + o["gp_weight"] * gradient_penalty(critic, real, fake))
            opt_c.zero_grad(set_to_none=True)
            loss_c.backward()
            opt_c.step()
            if i % o["n_critic"] == 0:
                loss_g = -critic(gen(torch.randn(64, m["latent"]))).mean()
                opt_g.zero_grad(set_to_none=True)
                loss_g.backward()
                opt_g.step()
        print(epoch, loss_c.item())


if __name__ == "__main__":
    torch.manual_seed(0)
    train(CONFIG)
