"""A clean program: sharpness-aware minimization (SAM) as an optimizer wrapper with a closure,
two separate forward-backward passes per step (no retained graph), float32, an MLP on generated
data. Two backwards per step are the method, not a D214 problem. --fixed: same program.
"""

import torch
from torch import nn


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_cls, rho=0.05, **kwargs):
        super().__init__(params, dict(rho=rho, **kwargs))
        self.base = base_cls(self.param_groups, **kwargs)

    @torch.no_grad()
    def step(self, closure):
        grads = [p.grad for g in self.param_groups for p in g["params"] if p.grad is not None]
        norm = torch.norm(torch.stack([g.norm() for g in grads])) + 1e-12
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    e = p.grad * (group["rho"] / norm)
                    self.state[p]["e"] = e
                    p.add_(e)
        with torch.enable_grad():
            self.zero_grad()
            loss = closure()
            loss.backward()
        for group in self.param_groups:
            for p in group["params"]:
                if "e" in self.state[p]:
                    p.sub_(self.state[p]["e"])
        self.base.step()
        return loss


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(20000, 64)
    y = (x[:, :8].sum(1) > 0).long()
    model = nn.Sequential(nn.Linear(64, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 2))
    opt = SAM(model.parameters(), torch.optim.SGD, lr=0.05, momentum=0.9)
    for step in range(400):
        idx = torch.randint(0, len(x), (256,))

        def closure(idx=idx):
            return nn.functional.cross_entropy(model(x[idx]), y[idx])

        opt.zero_grad()
        closure().backward()
        loss = opt.step(closure)
        if step % 100 == 0:
            print(step, float(loss))
