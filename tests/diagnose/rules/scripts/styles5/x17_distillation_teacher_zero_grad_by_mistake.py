"""Knowledge distillation: a frozen teacher (its weights loaded as from a checkpoint) and a
smaller student; the loss is KL(student || teacher) at temperature 4 plus cross-entropy. The
author's step helper clears the wrong model: `teacher.zero_grad()` (a leftover from the teacher's
own training script) instead of the student's optimizer.

Planted: the student's gradients are never cleared: each step adds to all previous ones.
--fixed: `optimizer.zero_grad()` on the student's optimizer.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def mlp(width, depth):
    layers, d = [], 64
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    return nn.Sequential(*layers, nn.Linear(d, 10))


def distill_loss(s_logits, t_logits, y, T=4.0, alpha=0.7):
    kd = nn.functional.kl_div(nn.functional.log_softmax(s_logits / T, 1),
                              nn.functional.softmax(t_logits / T, 1), reduction="batchmean")
    return alpha * kd * T * T + (1 - alpha) * nn.functional.cross_entropy(s_logits, y)


def step(student, teacher, optimizer, x, y):
    with torch.no_grad():
        t_logits = teacher(x)
    loss = distill_loss(student(x), t_logits, y)
    if FIXED:
        optimizer.zero_grad()
    else:
        teacher.zero_grad()
    loss.backward()
    optimizer.step()
    return loss


def pretrained_teacher_weights(teacher):
    """Stands for `torch.load("teacher.pt")`: the teacher was trained by another script."""
    return {k: v * 0.5 for k, v in teacher.state_dict().items()}


def main():
    torch.manual_seed(0)
    x, y = torch.randn(8192, 64), torch.randint(0, 10, (8192,))
    teacher, student = mlp(256, 3), mlp(64, 2)
    teacher.load_state_dict(pretrained_teacher_weights(teacher))
    teacher.eval()
    opt = torch.optim.Adam(student.parameters(), lr=1e-3)
    for epoch in range(2):
        for idx in torch.randperm(8192).split(128):
            loss = step(student, teacher, opt, x[idx], y[idx])
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
