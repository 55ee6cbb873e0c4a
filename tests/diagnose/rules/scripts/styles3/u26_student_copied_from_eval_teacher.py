"""Distillation where the student is initialized as a copy of the teacher: the teacher was put
in eval mode first, and `copy.deepcopy` keeps that mode, so the student trains with Dropout off
and its BatchNorm statistics frozen.

Planted: the student trains in eval mode. --fixed: student.train() after the copy.
"""

import copy
import sys

import torch
from torch import nn
from torch.nn import functional as F


def make_teacher():
    return nn.Sequential(nn.Linear(30, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Dropout(0.2),
                         nn.Linear(256, 5))


def main():
    torch.manual_seed(0)
    teacher = make_teacher().eval()
    student = copy.deepcopy(teacher)
    if "--fixed" in sys.argv:
        student.train()
    for p in teacher.parameters():
        p.requires_grad_(False)
    opt = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9)
    x = torch.randn(9600, 30)
    for epoch in range(3):
        for xb in x.split(64):
            with torch.no_grad():
                target = F.softmax(teacher(xb + 0.1 * torch.randn_like(xb)) / 2.0, 1)
            loss = F.kl_div(F.log_softmax(student(xb) / 2.0, 1), target, reduction="batchmean")
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
