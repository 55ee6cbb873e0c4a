"""A training loop that reports the running training accuracy over the epoch so far: each step's
predictions and labels are appended to Python lists (`preds.extend(...)`), and the progress line
shows the accuracy of everything seen in the epoch. A small MLP classifier with a 20-class head.

Planted: every step converts the whole lists back to tensors (`torch.tensor(all_preds)`) to
compute the running accuracy, so each step converts more values than the last: the step time
grows through the epoch. --fixed: running counts (correct, seen) updated per step.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv

if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(30000, 32)
    y = x[:, :20].argmax(1)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 20))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(2):
        all_preds, all_labels, correct, seen = [], [], 0, 0
        perm = torch.randperm(len(x))
        for step, start in enumerate(range(0, len(x), 64)):
            idx = perm[start : start + 64]
            logits = model(x[idx])
            loss = nn.functional.cross_entropy(logits, y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            if FIXED:
                correct += int((logits.argmax(1) == y[idx]).sum())
                seen += len(idx)
                running = correct / seen
            else:
                all_preds.extend(logits.argmax(1).tolist())
                all_labels.extend(y[idx].tolist())
                running = (torch.tensor(all_preds) == torch.tensor(all_labels)).float().mean()
            if step % 200 == 0:
                print(f"epoch {epoch} step {step} running acc {float(running):.3f}")
