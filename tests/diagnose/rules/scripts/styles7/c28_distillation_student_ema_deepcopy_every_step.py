"""Self-distillation with an EMA teacher (a DINO/BYOL-like recipe on vectors): the student is
trained to match the teacher's sharpened outputs on two noisy views; the teacher is an
exponential moving average of the student.

Planted: the EMA update is written as `teacher = copy.deepcopy(student)` followed by a blend of
the old teacher's weights into the copy, every step (a whole new model per step). --fixed: the
teacher is copied once and updated in place with `lerp_`.
"""

import copy
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
MOMENTUM, DIM = 0.99, 64


def encoder():
    return nn.Sequential(
        nn.Linear(DIM, 512), nn.GELU(), nn.Linear(512, 512), nn.GELU(),
        nn.Linear(512, 512), nn.GELU(), nn.Linear(512, 128),
    )


@torch.no_grad()
def ema_update(teacher, student):
    if FIXED:
        for t, s in zip(teacher.parameters(), student.parameters()):
            t.lerp_(s, 1 - MOMENTUM)
        return teacher
    new_teacher = copy.deepcopy(student)
    for n, o in zip(new_teacher.parameters(), teacher.parameters()):
        n.mul_(1 - MOMENTUM).add_(o, alpha=MOMENTUM)
    return new_teacher


if __name__ == "__main__":
    torch.manual_seed(0)
    data = torch.randn(20000, DIM)
    student = encoder()
    teacher = copy.deepcopy(student)
    for p in teacher.parameters():
        p.requires_grad_(False)
    opt = torch.optim.AdamW(student.parameters(), lr=5e-4)
    for step, idx in enumerate(torch.randperm(len(data)).split(64)):
        x = data[idx]
        v1, v2 = x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x)
        with torch.no_grad():
            target = (teacher(v2) / 0.04).softmax(1)
        loss = -(target * (student(v1) / 0.1).log_softmax(1)).sum(1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        teacher = ema_update(teacher, student)
        if step % 100 == 0:
            print(step, loss.item())
