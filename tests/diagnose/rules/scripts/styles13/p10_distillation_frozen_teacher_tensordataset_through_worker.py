"""Knowledge distillation: a frozen teacher (requires_grad off, eval mode, run under
`inference_mode`) and a small student trained on a KL term plus the hard labels. The inputs
are precomputed feature vectors kept as tensors in a `TensorDataset`.

Planted: the loader uses a worker (`num_workers=1`) over the in-memory `TensorDataset`: the
worker fetches 128 samples one by one, collates them and sends the batch through shared memory
to the training process, which costs more than slicing the tensors there. --fixed: no workers,
batches sliced from the tensors by a permutation.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

FIXED = "--fixed" in sys.argv


def mlp(width):
    return nn.Sequential(nn.Linear(64, width), nn.ReLU(), nn.Linear(width, 10))


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(20000, 64)
    y = x[:, :10].argmax(1)
    teacher, student = mlp(256).eval(), mlp(32)
    teacher.requires_grad_(False)
    opt = torch.optim.Adam(student.parameters(), lr=1e-3)
    loader = DataLoader(
        TensorDataset(x, y), batch_size=128, shuffle=True, num_workers=1, persistent_workers=True
    )
    for epoch in range(2):
        batches = ((x[i], y[i]) for i in torch.randperm(len(x)).split(128)) if FIXED else loader
        for xb, yb in batches:
            with torch.inference_mode():
                soft = teacher(xb).softmax(1)
            logits = student(xb)
            loss = nn.functional.kl_div(logits.log_softmax(1), soft.clone(), reduction="batchmean")
            loss = loss + 0.5 * nn.functional.cross_entropy(logits, yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
