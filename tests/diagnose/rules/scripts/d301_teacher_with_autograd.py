"""Knowledge distillation whose teacher was never frozen: its weights still require grad and its
eval-mode forward (on standardised features) runs with autograd on in every step, its output
detached for the loss. The
autograd is wasted (D301), but the forward is the step's work, not validation (D304)."""

import torch
from torch import nn
from torch.nn import functional as F


def main():
    torch.manual_seed(0)
    teacher = nn.Sequential(nn.Linear(32, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                            nn.Linear(1024, 10)).eval()
    student = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
    opt = torch.optim.Adam(student.parameters(), lr=1e-3)
    x = torch.randn(6400, 32) * 3 + 1
    mean, std = x.mean(0), x.std(0)
    for epoch in range(2):
        for xb in x.split(64):
            soft = F.softmax(teacher((xb - mean) / std).detach() / 4.0, dim=1)
            loss = F.kl_div(F.log_softmax(student(xb) / 4.0, dim=1), soft, reduction="batchmean")
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, float(loss))


if __name__ == "__main__":
    main()
