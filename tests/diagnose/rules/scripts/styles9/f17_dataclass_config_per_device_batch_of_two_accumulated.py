"""A config dataclass in the style of a Hugging Face `TrainingArguments`: `per_device_batch_size`
and `gradient_accumulation_steps` give the effective batch, `max_steps` bounds the run, and
`logging_steps` / `eval_steps` drive the log and evaluation. A wide MLP classifier on generated
tabular data.

Planted: `per_device_batch_size=2` with `gradient_accumulation_steps=32` (an effective batch of
64, as copied from a large-GPU recipe), on a CPU where 64 fits easily: every forward and
backward runs on two rows. --fixed: per_device_batch_size=64, gradient_accumulation_steps=1.
"""

import dataclasses
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


@dataclasses.dataclass
class TrainingArguments:
    per_device_batch_size: int = 2
    gradient_accumulation_steps: int = 32
    learning_rate: float = 1e-3
    max_steps: int = 60
    logging_steps: int = 20
    eval_steps: int = 30


if __name__ == "__main__":
    torch.manual_seed(0)
    args = (TrainingArguments(per_device_batch_size=64, gradient_accumulation_steps=1)
            if FIXED else TrainingArguments())
    x = torch.randn(20000, 64)
    y = (x[:, :6].sum(1) > 0).long()
    xv, yv = x[-2000:], y[-2000:]
    model = nn.Sequential(nn.Linear(64, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                          nn.Linear(1024, 2))
    opt = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    micro, cursor = args.per_device_batch_size, 0
    for step in range(1, args.max_steps + 1):
        for _ in range(args.gradient_accumulation_steps):
            xb, yb = x[cursor : cursor + micro], y[cursor : cursor + micro]
            cursor = (cursor + micro) % 16000
            loss = nn.functional.cross_entropy(model(xb), yb) / args.gradient_accumulation_steps
            loss.backward()
        opt.step()
        opt.zero_grad()
        if step % args.logging_steps == 0:
            print("step", step, loss.item() * args.gradient_accumulation_steps)
        if step % args.eval_steps == 0:
            with torch.no_grad():
                print("eval acc", (model(xv).argmax(1) == yv).float().mean().item())
