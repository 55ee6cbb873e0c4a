"""A Lookahead optimizer wrapper (slow weights pulled towards the fast weights every k steps)
around an inner RAdam, on a deep narrow MLP-Mixer-like model with many small parameter
tensors. Parameter groups: no weight decay on norms and biases.

Planted: the inner RAdam is built with `foreach=False` ("deterministic across versions", a
comment says): its update runs tensor by tensor over ~100 small tensors every step.
--fixed: `foreach=True` (on a CPU the default, `foreach=None`, is the per-tensor loop too).
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Lookahead:
    def __init__(self, inner, k=5, alpha=0.5):
        self.inner, self.k, self.alpha, self.count = inner, k, alpha, 0
        self.slow = [[p.detach().clone() for p in g["params"]] for g in inner.param_groups]

    def zero_grad(self):
        self.inner.zero_grad()

    def step(self):
        self.inner.step()
        self.count += 1
        if self.count % self.k == 0:
            with torch.no_grad():
                for group, slow in zip(self.inner.param_groups, self.slow):
                    for p, s in zip(group["params"], slow):
                        s.add_(p - s, alpha=self.alpha)
                        p.copy_(s)


class MixerBlock(nn.Module):
    def __init__(self, tokens, dim):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.tok = nn.Linear(tokens, tokens)
        self.ch = nn.Linear(dim, dim)

    def forward(self, x):
        x = x + self.tok(self.n1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.ch(self.n2(x))


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), *[MixerBlock(16, 32) for _ in range(16)],
                          nn.Flatten(), nn.Linear(16 * 32, 4))
    decay = [p for n, p in model.named_parameters() if p.ndim > 1]
    no_decay = [p for n, p in model.named_parameters() if p.ndim <= 1]
    kwargs = {"foreach": FIXED}
    inner = torch.optim.RAdam([{"params": decay, "weight_decay": 0.01},
                               {"params": no_decay, "weight_decay": 0.0}], lr=1e-3, **kwargs)
    opt = Lookahead(inner)
    x = torch.randn(8000, 16, 8)
    y = (x[:, :, 0].mean(1) > 0).long()
    for step in range(400):
        idx = torch.randint(0, len(x), (16,))
        loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(step, float(loss))
