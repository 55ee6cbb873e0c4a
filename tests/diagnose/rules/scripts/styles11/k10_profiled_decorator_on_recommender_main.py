"""A two-tower-free recommender (matrix factorisation with user/item biases and a small MLP on
top of the dot product) over big embedding tables, trained on generated implicit feedback.
`main()` is wrapped by the project's own `@profiled` decorator, which a utility module offers to
"look at the hot ops when needed".

Planted: `@profiled` is applied with `enabled=True` (the default of the decorator) on `main`:
torch.profiler records every op of every training step. --fixed: `@profiled(enabled=False)`.
"""

import functools
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def profiled(enabled=True):
    def wrap(fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            if not enabled:
                return fn(*args, **kwargs)
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                        record_shapes=True) as prof:
                result = fn(*args, **kwargs)
            print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=5))
            return result
        return run
    return wrap


class MF(nn.Module):
    def __init__(self, users, items, dim=64):
        super().__init__()
        self.u, self.i = nn.Embedding(users, dim), nn.Embedding(items, dim)
        self.ub, self.ib = nn.Embedding(users, 1), nn.Embedding(items, 1)
        self.mlp = nn.Sequential(nn.Linear(dim, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, u, i):
        inter = self.u(u) * self.i(i)
        return (self.mlp(inter) + self.ub(u) + self.ib(i)).squeeze(-1)


@profiled(enabled=not FIXED)
def main():
    torch.manual_seed(0)
    users, items = 20000, 50000
    model = MF(users, items)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(300):
        u = torch.randint(0, users, (512,))
        i = torch.randint(0, items, (512,))
        target = ((u % 7) == (i % 7)).float()
        loss = nn.functional.binary_cross_entropy_with_logits(model(u, i), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(step, float(loss))


if __name__ == "__main__":
    main()
