"""CLEAN: functional style: parameters in a dict, `torch.func.functional_call` and
`torch.func.grad_and_value` for the gradient, an SGD-with-momentum closure for the update;
float32 throughout, a regression MLP on sensor features; the loss read every 100 steps.
Nothing is planted (`--fixed` changes nothing).
"""

import torch
from torch import nn
from torch.func import functional_call, grad_and_value


def make_sgd(params, lr=0.05, momentum=0.9):
    buf = {k: torch.zeros_like(v) for k, v in params.items()}

    def update(params, grads):
        out = {}
        for k, p in params.items():
            buf[k].mul_(momentum).add_(grads[k])
            out[k] = p - lr * buf[k]
        return out

    return update


def main():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(32, 256), nn.Tanh(), nn.Linear(256, 256), nn.Tanh(),
                        nn.Linear(256, 1))
    params = {k: v.detach() for k, v in net.named_parameters()}
    x = torch.randn(16384, 32)
    y = (x[:, :8].sin().sum(1, keepdim=True) + 0.05 * torch.randn(16384, 1))

    def loss_fn(p, xb, yb):
        return nn.functional.mse_loss(functional_call(net, p, (xb,)), yb)

    step_fn = grad_and_value(loss_fn)
    update = make_sgd(params)
    step = 0
    for epoch in range(3):
        for idx in torch.randperm(len(x)).split(128):
            grads, loss = step_fn(params, x[idx], y[idx])
            params = update(params, grads)
            if step % 100 == 0:
                print(step, float(loss))
            step += 1


if __name__ == "__main__":
    main()
