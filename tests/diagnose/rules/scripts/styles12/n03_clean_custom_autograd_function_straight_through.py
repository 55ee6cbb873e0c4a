"""A clean control: a binarized-activation network with a custom `torch.autograd.Function`
(sign in the forward, a clipped straight-through gradient in the backward), batches of 256,
AdamW, validation once per epoch under `torch.inference_mode()` in eval mode. Nothing is
planted; `--fixed` runs the same program.
"""

import torch
from torch import nn


class SignSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sign()

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * (x.abs() <= 1).to(grad_out.dtype)


class BinaryAct(nn.Module):
    def forward(self, x):
        return SignSTE.apply(x)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(14000, 64)
    y = (x[:, :4].sum(1) > 0).long()
    model = nn.Sequential(
        nn.Linear(64, 256),
        nn.BatchNorm1d(256),
        BinaryAct(),
        nn.Linear(256, 256),
        nn.BatchNorm1d(256),
        BinaryAct(),
        nn.Linear(256, 2),
    )
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(3):
        model.train()
        for idx in torch.randperm(12000).split(256):
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        with torch.inference_mode():
            acc = (model(x[12000:]).argmax(1) == y[12000:]).float().mean()
        print("epoch", epoch, float(loss), float(acc))
