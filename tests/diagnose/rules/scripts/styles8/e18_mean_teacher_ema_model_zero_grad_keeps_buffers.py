"""Semi-supervised "mean teacher": a student trained on a few labelled rows plus a consistency
loss against an EMA teacher on unlabelled rows (both with input noise); the teacher's weights
follow the student with decay 0.99 under `torch.no_grad()` after each step. A wide MLP.

Planted: the author clears gradients with `student.zero_grad(set_to_none=False)` on the module,
so every step writes zeros into every gradient of the wide layers. --fixed:
`student.zero_grad()` (set to None).
"""

import copy
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv

if __name__ == "__main__":
    torch.manual_seed(0)
    w = torch.randn(64, 4)
    unlabelled = torch.randn(20000, 64)
    labelled = torch.randn(1000, 64)
    labels = (labelled @ w).argmax(1)
    student = nn.Sequential(
        nn.Linear(64, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 4)
    )
    teacher = copy.deepcopy(student).requires_grad_(False)
    opt = torch.optim.SGD(student.parameters(), lr=0.02, momentum=0.9)
    for epoch in range(2):
        for u in unlabelled.split(64):
            idx = torch.randint(0, len(labelled), (32,))
            sup = nn.functional.cross_entropy(
                student(labelled[idx] + 0.1 * torch.randn(32, 64)), labels[idx]
            )
            with torch.no_grad():
                target = teacher(u + 0.1 * torch.randn_like(u)).softmax(1)
            cons = nn.functional.mse_loss(student(u + 0.1 * torch.randn_like(u)).softmax(1), target)
            loss = sup + 10.0 * cons
            if FIXED:
                student.zero_grad()
            else:
                student.zero_grad(set_to_none=False)
            loss.backward()
            opt.step()
            with torch.no_grad():
                for t, s in zip(teacher.parameters(), student.parameters()):
                    t.lerp_(s, 0.01)
        print("epoch", epoch, sup.item(), cons.item())
