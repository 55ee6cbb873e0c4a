"""A custom `torch.autograd.Function`: a "soft clipped" activation (x clamped to a learned-free
band with a smooth gradient) whose forward is one expression and whose backward the author wrote
by hand, as in a paper's reference code; an MLP using it between its layers.

Planted: the hand-written backward computes the gradient row by row in a Python loop
(`for i in range(grad.shape[0])`), a few tiny ops per row of a 128-row batch.
--fixed: the same formula on the whole tensor at once.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 3 * torch.tanh(x / 3)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if FIXED:
            return grad * (1 - torch.tanh(x / 3) ** 2)
        out = torch.empty_like(grad)
        for i in range(grad.shape[0]):
            t = torch.tanh(x[i] / 3)
            out[i] = grad[i] * (1 - t * t)
        return out


class SoftClipMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(20, 128), nn.Linear(128, 128), nn.Linear(128, 1)

    def forward(self, x):
        x = SoftClip.apply(self.fc1(x))
        x = SoftClip.apply(self.fc2(x))
        return self.fc3(x)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(6000, 20)
    y = torch.sin(x[:, :1] * 2) + x[:, 1:2]
    model = SoftClipMLP()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        perm = torch.randperm(len(x))
        for start in range(0, len(x), 128):
            idx = perm[start : start + 128]
            loss = nn.functional.mse_loss(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
