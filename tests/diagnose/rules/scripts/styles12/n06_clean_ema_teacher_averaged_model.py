"""A clean control: mean-teacher semi-supervised training where the teacher is
`torch.optim.swa_utils.AveragedModel(student, multi_avg_fn=get_ema_multi_avg_fn(0.99))`,
updated in place after every step; the teacher's targets on unlabelled data are computed under
`torch.no_grad()`. Batches of 128 labelled + 128 unlabelled. Nothing is planted; `--fixed`
runs the same program.
"""

import torch
from torch import nn
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

if __name__ == "__main__":
    torch.manual_seed(0)
    lx = torch.randn(4000, 48)
    ly = (lx[:, :4].sum(1) > 0).long()
    ux = torch.randn(16000, 48)
    student = nn.Sequential(nn.Linear(48, 256), nn.ReLU(), nn.Linear(256, 2))
    teacher = AveragedModel(student, multi_avg_fn=get_ema_multi_avg_fn(0.99))
    opt = torch.optim.Adam(student.parameters(), lr=1e-3)
    for epoch in range(3):
        uperm = torch.randperm(len(ux))
        for step, idx in enumerate(torch.randperm(len(lx)).split(128)):
            u = ux[uperm[step * 128 : (step + 1) * 128]]
            with torch.no_grad():
                target = teacher(u).softmax(1)
            loss = nn.functional.cross_entropy(student(lx[idx]), ly[idx])
            loss = loss + nn.functional.mse_loss(
                student(u + 0.1 * torch.randn_like(u)).softmax(1), target
            )
            opt.zero_grad()
            loss.backward()
            opt.step()
            teacher.update_parameters(student)
        print("epoch", epoch, float(loss))
