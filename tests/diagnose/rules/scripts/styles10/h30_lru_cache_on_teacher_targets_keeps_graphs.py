"""Knowledge distillation where the teacher's soft targets are memoised: a method decorated
with `functools.lru_cache(maxsize=None)` returns the teacher's logits for a batch index, so
each batch's targets are computed once per run (the batches repeat every epoch). A wide
teacher MLP distilled into a small student on generated data.

Planted: the cached teacher forward runs with autograd on (the teacher's parameters require
grad), so every cache entry keeps the teacher's whole graph for that batch (its activations)
alive for the run: memory grows with each new batch. --fixed: the teacher's parameters are
frozen (`requires_grad_(False)`) and the cached forward runs under `torch.no_grad()`.
"""

import functools
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Distiller:
    def __init__(self, teacher, student, x, y, batch_size):
        self.teacher, self.student, self.x, self.y, self.bs = teacher, student, x, y, batch_size
        self.opt = torch.optim.Adam(student.parameters(), lr=1e-3)

    @functools.lru_cache(maxsize=None)  # noqa: B019
    def teacher_logits(self, batch_index):
        xb = self.x[batch_index * self.bs : (batch_index + 1) * self.bs]
        if FIXED:
            with torch.no_grad():
                return self.teacher(xb)
        return self.teacher(xb)

    def fit(self, epochs, temperature=2.0):
        batches = len(self.x) // self.bs
        for epoch in range(epochs):
            for b in range(batches):
                xb, yb = self.x[b * self.bs : (b + 1) * self.bs], self.y[b * self.bs : (b + 1) * self.bs]
                logits = self.student(xb)
                soft = nn.functional.kl_div(
                    nn.functional.log_softmax(logits / temperature, 1),
                    nn.functional.softmax(self.teacher_logits(b).detach() / temperature, 1),
                    reduction="batchmean")
                loss = soft * temperature**2 + nn.functional.cross_entropy(logits, yb)
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            print("epoch", epoch, loss.item())


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(24576, 128)
    y = (x[:, :5].sum(1) > 0).long()
    teacher = nn.Sequential(nn.Linear(128, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(),
                            nn.Linear(2048, 2))
    teacher.eval()
    if FIXED:
        teacher.requires_grad_(False)
    student = nn.Sequential(nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 2))
    Distiller(teacher, student, x, y, batch_size=128).fit(epochs=2)
