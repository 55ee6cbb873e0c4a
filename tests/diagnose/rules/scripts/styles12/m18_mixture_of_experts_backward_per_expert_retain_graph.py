"""A mixture-of-experts classifier: a softmax gate routes each sample to its top expert (four
expert MLPs over a shared trunk), with a load-balancing auxiliary loss on the gate.

Planted: the training step calls `backward(retain_graph=True)` once per expert's loss and once
more for the balancing loss: the shared trunk and gate are backpropagated five times per step.
--fixed: the losses are summed and one backward runs.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class MoE(nn.Module):
    def __init__(self, experts=4, width=256):
        super().__init__()
        self.trunk = nn.Sequential(
            nn.Linear(64, width),
            nn.ReLU(),
            nn.Linear(width, width),
            nn.ReLU(),
            nn.Linear(width, width),
            nn.ReLU(),
        )
        self.gate = nn.Linear(width, experts)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 10))
            for _ in range(experts)
        )

    def forward(self, x):
        h = self.trunk(x)
        probs = self.gate(h).softmax(-1)
        route = probs.argmax(-1)
        return h, probs, route


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(6000, 64)
    y = (x[:, :10]).argmax(1)
    model = MoE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        for idx in torch.randperm(len(x)).split(256):
            h, probs, route = model(x[idx])
            losses = []
            for e, expert in enumerate(model.experts):
                mask = route == e
                if mask.any():
                    out = expert(h[mask]) * probs[mask, e : e + 1]
                    losses.append(
                        nn.functional.cross_entropy(out, y[idx][mask], reduction="sum") / len(idx)
                    )
            balance = (probs.mean(0) * len(model.experts)).pow(2).mean()
            opt.zero_grad()
            if FIXED:
                (sum(losses) + 0.01 * balance).backward()
            else:
                for loss in losses:
                    loss.backward(retain_graph=True)
                (0.01 * balance).backward()
            opt.step()
        print("epoch", epoch, float(sum(losses)))
