"""Clean: knowledge distillation with a frozen teacher (eval mode, `requires_grad_(False)`,
forward under `inference_mode`), a student trained on temperature-scaled KL plus hard labels,
batches sliced from in-memory tensors, evaluation of the student once per epoch in `eval()`
mode under `inference_mode`. (`--fixed` changes nothing.)
"""

import torch
from torch import nn


def net(width):
    return nn.Sequential(
        nn.Linear(48, width),
        nn.ReLU(),
        nn.Dropout(0.1),
        nn.Linear(width, width),
        nn.ReLU(),
        nn.Linear(width, 6),
    )


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(12000, 48)
    y = x[:, :6].argmax(1)
    teacher, student = net(512).eval(), net(64)
    teacher.requires_grad_(False)
    opt = torch.optim.AdamW(student.parameters(), lr=2e-3, foreach=True)
    T = 2.0
    for epoch in range(3):
        for idx in torch.randperm(10000).split(128):
            with torch.inference_mode():
                soft = (teacher(x[idx]) / T).softmax(1)
            logits = student(x[idx])
            kd = nn.functional.kl_div(
                (logits / T).log_softmax(1), soft.clone(), reduction="batchmean"
            )
            loss = kd * T * T + nn.functional.cross_entropy(logits, y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        student.eval()
        with torch.inference_mode():
            acc = (student(x[10000:]).argmax(1) == y[10000:]).float().mean()
        student.train()
        print("epoch", epoch, float(loss), float(acc))
