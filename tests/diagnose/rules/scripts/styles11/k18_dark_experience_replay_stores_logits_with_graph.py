"""Dark Experience Replay (DER) for class-incremental learning: besides the input and label, the
replay buffer keeps the model's logits at the time a sample was seen, and a distillation term
pulls today's logits on replayed samples towards the stored ones. Reservoir sampling over a
stream of generated tasks; an MLP.

Planted: the buffer stores `logits[i]` straight from the forward pass, not detached: each stored
row holds the graph of the step it came from, so the graphs of hundreds of steps stay alive and
memory grows every step. --fixed: `logits.detach()` is stored.
"""

import random
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Reservoir:
    def __init__(self, size):
        self.size, self.items, self.seen = size, [], 0

    def add(self, x, y, logits):
        for i in range(len(x)):
            self.seen += 1
            item = (x[i], y[i], logits[i].detach() if FIXED else logits[i])
            if len(self.items) < self.size:
                self.items.append(item)
            else:
                j = random.randrange(self.seen)
                if j < self.size:
                    self.items[j] = item

    def sample(self, n):
        xs, ys, ls = zip(*random.sample(self.items, min(n, len(self.items))))
        return torch.stack(xs), torch.stack(ys), torch.stack(ls)


if __name__ == "__main__":
    torch.manual_seed(0)
    random.seed(0)
    model = nn.Sequential(nn.Linear(64, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.03)
    buffer = Reservoir(50000)
    for task in range(5):
        classes = torch.tensor([2 * task, 2 * task + 1])
        for step in range(150):
            x = torch.randn(32, 64)
            y = classes[(x[:, task] > 0).long()]
            logits = model(x)
            loss = nn.functional.cross_entropy(logits, y)
            if buffer.items:
                bx, _, bl = buffer.sample(32)
                loss = loss + 0.5 * nn.functional.mse_loss(model(bx), bl.detach())
            opt.zero_grad()
            loss.backward()
            opt.step()
            buffer.add(x, y, logits)
        print("task", task, float(loss), len(buffer.items))
