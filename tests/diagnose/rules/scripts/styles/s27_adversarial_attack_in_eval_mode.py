"""Adversarial training (FGSM): the attack is crafted on the model in eval() mode with autograd
on (a gradient reaches the model's output), then the model trains in train() mode.

Clean: the eval-mode forward with a gradient is not training in eval mode (no D305). Both
variants are the same program; --fixed is accepted and ignored.
"""

import torch
from torch import nn


def fgsm(net, x, y, eps):
    net.eval()  # craft the attack with frozen BatchNorm statistics and no Dropout
    x_adv = x.clone().requires_grad_()
    (grad,) = torch.autograd.grad(nn.functional.cross_entropy(net(x_adv), y), x_adv)
    net.train()
    return (x + eps * grad.sign()).detach()


def main():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(20, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Dropout(0.2),
                        nn.Linear(64, 3))
    opt = torch.optim.SGD(net.parameters(), lr=0.05, foreach=True)
    x_all, y_all = torch.randn(2048, 20), torch.randint(0, 3, (2048,))
    for _ in range(3):
        for x, y in zip(x_all.split(128), y_all.split(128)):
            x_adv = fgsm(net, x, y, eps=0.1)
            opt.zero_grad()
            nn.functional.cross_entropy(net(x_adv), y).backward()
            opt.step()


if __name__ == "__main__":
    main()
