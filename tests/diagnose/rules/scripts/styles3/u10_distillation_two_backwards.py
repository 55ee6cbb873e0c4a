"""Teacher-student distillation: a frozen teacher (under no_grad) gives soft targets; the student
is trained on a KL term and a cross-entropy term, each backpropagated on its own, the first with
retain_graph=True so the second can reuse the student's graph.

Planted: two backward passes through one graph (retain_graph=True). --fixed: one backward of
the weighted sum.
"""

import sys

import torch
from torch import nn
from torch.nn import functional as F


def mlp(width):
    return nn.Sequential(nn.Linear(64, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                         nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 10))


def main(fixed):
    torch.manual_seed(0)
    teacher, student = mlp(512).eval(), mlp(384)
    for p in teacher.parameters():
        p.requires_grad_(False)
    opt = torch.optim.Adam(student.parameters(), lr=1e-3)
    x, y = torch.randn(16000, 64), torch.randint(0, 10, (16000,))
    temperature, alpha = 4.0, 0.7
    for epoch in range(3):
        for xb, yb in zip(x.split(128), y.split(128)):
            with torch.no_grad():
                soft = F.softmax(teacher(xb) / temperature, dim=1)
            logits = student(xb)
            kd = F.kl_div(F.log_softmax(logits / temperature, 1), soft,
                          reduction="batchmean") * temperature ** 2
            ce = F.cross_entropy(logits, yb)
            opt.zero_grad()
            if fixed:
                (alpha * kd + (1 - alpha) * ce).backward()
            else:
                (alpha * kd).backward(retain_graph=True)
                ((1 - alpha) * ce).backward()
            opt.step()
        print(epoch, kd.item(), ce.item())


if __name__ == "__main__":
    main(fixed="--fixed" in sys.argv)
