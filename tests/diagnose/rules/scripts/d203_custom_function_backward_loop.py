"""A custom autograd Function (a leaky clamp) whose hand-written backward walks the batch row by
row in Python: a Python loop of tiny ops that runs inside backward()."""

import torch
from torch import nn


class LeakyClamp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(-1, 1)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        out = torch.empty_like(grad)
        for i in range(grad.shape[0]):
            inside = (x[i].abs() <= 1).float()
            out[i] = grad[i] * (inside + 0.01 * (1 - inside))
        return out


def main():
    torch.manual_seed(0)
    fc1, fc2 = nn.Linear(16, 64), nn.Linear(64, 1)
    opt = torch.optim.SGD([*fc1.parameters(), *fc2.parameters()], lr=0.01)
    x, y = torch.randn(4096, 16), torch.randn(4096, 1)
    for start in range(0, 4096, 128):
        loss = nn.functional.mse_loss(fc2(LeakyClamp.apply(fc1(x[start : start + 128]))), y[start : start + 128])
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
