"""A functional-style point-cloud classifier: the parameters live in a plain dict, the model is
`torch.func.functional_call` on a stateless PointNet, gradients come from `torch.func.grad`
and the update is a closure over an Adam-like state dict. Point clouds of 256 points are
generated on the fly (spheres, cubes, cylinders), jittered and rotated about z.

Planted: the parameter dict is created with `dtype=torch.float64` ("numerical stability", a
habit from the author's scientific-computing code) and the clouds follow it. --fixed: float32.
"""

import math
import sys

import torch
from torch import nn
from torch.func import functional_call, grad

DTYPE = torch.float32 if "--fixed" in sys.argv else torch.float64
POINTS, CLASSES = 256, 3


class PointNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.local = nn.Sequential(nn.Linear(3, 64), nn.ReLU(), nn.Linear(64, 128), nn.ReLU(),
                                   nn.Linear(128, 256))
        self.head = nn.Sequential(nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, CLASSES))

    def forward(self, pts):
        return self.head(self.local(pts).amax(dim=1))


def sample_clouds(n, gen):
    shape = torch.randint(0, CLASSES, (n,), generator=gen)
    u = torch.rand(n, POINTS, 3, generator=gen) * 2 - 1
    sphere = u / u.norm(dim=-1, keepdim=True)
    cube = u.clamp(-0.8, 0.8)
    cyl = torch.cat([sphere[..., :2] / sphere[..., :2].norm(dim=-1, keepdim=True), u[..., 2:]],
                    -1)
    pts = torch.where(shape[:, None, None] == 0, sphere,
                      torch.where(shape[:, None, None] == 1, cube, cyl))
    theta = torch.rand(n, generator=gen) * 2 * math.pi
    c, s = theta.cos(), theta.sin()
    rot = torch.stack([torch.stack([c, -s, 0 * c], -1), torch.stack([s, c, 0 * c], -1),
                       torch.stack([0 * c, 0 * c, 1 + 0 * c], -1)], 1)
    pts = pts @ rot + 0.02 * torch.randn(pts.shape, generator=gen)
    return pts.to(DTYPE), shape


def make_adam(params, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
    m = {k: torch.zeros_like(v) for k, v in params.items()}
    v2 = {k: torch.zeros_like(v) for k, v in params.items()}
    t = [0]

    def update(params, grads):
        t[0] += 1
        new = {}
        for k in params:
            m[k].mul_(b1).add_(grads[k], alpha=1 - b1)
            v2[k].mul_(b2).addcmul_(grads[k], grads[k], value=1 - b2)
            mhat = m[k] / (1 - b1 ** t[0])
            vhat = v2[k] / (1 - b2 ** t[0])
            new[k] = params[k] - lr * mhat / (vhat.sqrt() + eps)
        return new

    return update


def main():
    torch.manual_seed(0)
    net = PointNet()
    params = {k: v.detach().to(DTYPE) for k, v in net.named_parameters()}

    def loss_fn(p, pts, labels):
        return nn.functional.cross_entropy(functional_call(net, p, (pts,)), labels)

    grad_fn = grad(loss_fn)
    update = make_adam(params)
    gen = torch.Generator().manual_seed(1)
    for step in range(300):
        pts, labels = sample_clouds(32, gen)
        params = update(params, grad_fn(params, pts, labels))
        if step % 100 == 0:
            print(step, float(loss_fn(params, pts, labels)))


if __name__ == "__main__":
    main()
