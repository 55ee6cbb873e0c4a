"""DINO-style self-distillation on generated "images" (feature vectors with two augmented
views): a student and a momentum teacher with a projection head, centering and sharpening of the
teacher's outputs, cross-entropy between the views.

Planted: `update_teacher()` rebuilds the teacher every step with `copy.deepcopy(student)` and then
blends the old teacher's weights into the copy (momentum 0.996): a full copy of the model every
step, when an in-place `lerp_` on the existing teacher gives the same weights.
--fixed: the teacher is updated in place with `torch._foreach_lerp_`.
"""

import copy
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def make_net():
    return nn.Sequential(nn.Linear(256, 512), nn.GELU(), nn.Linear(512, 512), nn.GELU(),
                         nn.Linear(512, 1024))


def update_teacher(teacher, student, m=0.996):
    if FIXED:
        with torch.no_grad():
            torch._foreach_lerp_(list(teacher.parameters()), list(student.parameters()), 1 - m)
        return teacher
    new = copy.deepcopy(student)
    with torch.no_grad():
        for pn, po in zip(new.parameters(), teacher.parameters()):
            pn.mul_(1 - m).add_(po, alpha=m)
    new.requires_grad_(False)
    return new


if __name__ == "__main__":
    torch.manual_seed(0)
    data = torch.randn(8000, 256)
    student = make_net()
    teacher = copy.deepcopy(student).requires_grad_(False)
    center = torch.zeros(1024)
    opt = torch.optim.AdamW(student.parameters(), lr=5e-4)
    for step in range(300):
        x = data[torch.randint(0, len(data), (64,))]
        v1, v2 = x + 0.1 * torch.randn_like(x), x * (torch.rand_like(x) > 0.1)
        with torch.no_grad():
            t1, t2 = teacher(v1), teacher(v2)
            p1, p2 = ((t1 - center) / 0.04).softmax(-1), ((t2 - center) / 0.04).softmax(-1)
        s1, s2 = (student(v1) / 0.1).log_softmax(-1), (student(v2) / 0.1).log_softmax(-1)
        loss = -((p1 * s2).sum(-1).mean() + (p2 * s1).sum(-1).mean()) / 2
        opt.zero_grad()
        loss.backward()
        opt.step()
        teacher = update_teacher(teacher, student)
        center = 0.9 * center + 0.1 * torch.cat([t1, t2]).mean(0)
        if step % 100 == 0:
            print(step, float(loss))
