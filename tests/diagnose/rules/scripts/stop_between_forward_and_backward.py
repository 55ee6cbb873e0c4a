"""Distillation where the budget runs out between the student's forward and the teacher's
(no-grad) forward: the student's forward never gets its backward because diagnose stopped the
program there. That forward is training cut short, not an evaluation with autograd in train
mode (D301, D302). The sleep stands for a slow source between the two forwards (a simulator's
step, a remote batch), so the budget runs out there on nearly every run."""

import time

import torch
from torch import nn

if __name__ == "__main__":
    torch.manual_seed(0)
    student = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 4))
    teacher = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)).eval()
    opt = torch.optim.SGD(student.parameters(), lr=0.01)
    for step in range(1000):
        x = torch.randn(16, 32)
        logits = student(x)
        time.sleep(0.2)
        with torch.no_grad():
            target = teacher(x).softmax(1)
        loss = nn.functional.cross_entropy(logits, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
