"""A clean program: DINO-style self-distillation whose momentum teacher is updated in place with
`torch._foreach_lerp_` every step (no copy), centering and sharpening of the teacher's output.
--fixed: same program.
"""

import copy

import torch
from torch import nn

if __name__ == "__main__":
    torch.manual_seed(0)
    data = torch.randn(8000, 256)
    student = nn.Sequential(nn.Linear(256, 512), nn.GELU(), nn.Linear(512, 512), nn.GELU(),
                            nn.Linear(512, 1024))
    teacher = copy.deepcopy(student).requires_grad_(False)
    center = torch.zeros(1024)
    opt = torch.optim.AdamW(student.parameters(), lr=5e-4)
    s_params, t_params = list(student.parameters()), list(teacher.parameters())
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
        with torch.no_grad():
            torch._foreach_lerp_(t_params, s_params, 0.004)
        center = 0.9 * center + 0.1 * torch.cat([t1, t2]).mean(0)
        if step % 100 == 0:
            print(step, float(loss))
