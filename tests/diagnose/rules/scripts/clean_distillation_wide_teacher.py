"""Knowledge distillation, clean: a frozen teacher, 16 times wider than the student and trained
on standardised features, gives soft targets in every step; the student trains on the raw ones.
The teacher's eval-mode forward under no_grad feeds the loss: it is not validation (D304)."""

import torch
from torch import nn
from torch.nn import functional as F


def main():
    torch.manual_seed(0)
    teacher = nn.Sequential(nn.Linear(32, 1024), nn.ReLU(), nn.Dropout(0.1), nn.Linear(1024, 1024),
                            nn.ReLU(), nn.Linear(1024, 10)).eval()
    for p in teacher.parameters():
        p.requires_grad_(False)
    student = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
    opt = torch.optim.Adam(student.parameters(), lr=1e-3)
    x = torch.randn(6400, 32) * 3 + 1
    mean, std = x.mean(0), x.std(0)
    for epoch in range(2):
        for xb in x.split(64):
            with torch.no_grad():
                soft = F.softmax(teacher((xb - mean) / std) / 4.0, dim=1)
            loss = F.kl_div(F.log_softmax(student(xb) / 4.0, dim=1), soft, reduction="batchmean")
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, float(loss))


if __name__ == "__main__":
    main()
