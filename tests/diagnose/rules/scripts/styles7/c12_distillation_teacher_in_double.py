"""Knowledge distillation: a wide frozen teacher MLP and a small student, the loss a mix of the
KL divergence to the teacher's temperature-softened outputs and the hard-label cross-entropy.

Planted: the teacher is kept in float64 (`teacher.double()`, "soft targets at T=4 need the
precision") and the batch is cast to double for it, so the teacher's forward, the largest part of
each step, runs in float64. --fixed: the teacher stays in float32.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
T, ALPHA, DIM = 4.0, 0.7, 128


def mlp(width, depth):
    layers, d = [], DIM
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    return nn.Sequential(*layers, nn.Linear(d, 10))


if __name__ == "__main__":
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(20000, DIM, generator=g)
    y = (x[:, :10].argmax(1))
    teacher = mlp(1024, 3).eval()
    if not FIXED:
        teacher = teacher.double()
    for p in teacher.parameters():
        p.requires_grad_(False)
    student = mlp(128, 2)
    opt = torch.optim.Adam(student.parameters(), lr=1e-3)
    teacher_dtype = next(teacher.parameters()).dtype
    for epoch in range(2):
        for idx in torch.randperm(len(x), generator=g).split(128):
            xb = x[idx]
            with torch.no_grad():
                soft = (teacher(xb.to(teacher_dtype)) / T).softmax(1).float()
            logits = student(xb)
            kd = nn.functional.kl_div((logits / T).log_softmax(1), soft, reduction="batchmean")
            loss = ALPHA * T * T * kd + (1 - ALPHA) * nn.functional.cross_entropy(logits, y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())
