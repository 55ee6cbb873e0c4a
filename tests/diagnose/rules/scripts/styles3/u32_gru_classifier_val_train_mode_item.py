"""TWO planted problems in a sequence classifier (GRU + Dropout): the per-epoch validation never
switches to eval mode (Dropout active), and every step reads the loss back with .item() into a
list of floats for a progress bar.

Planted: evaluation in train mode (error) + a host read per step (info). --fixed: eval()/train()
around validation, the running loss stays a tensor.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class SeqClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(10, 96, batch_first=True)
        self.drop = nn.Dropout(0.3)
        self.head = nn.Linear(96, 3)

    def forward(self, x):
        _, h = self.rnn(x)
        return self.head(self.drop(h[-1]))


def main():
    torch.manual_seed(0)
    model = SeqClassifier()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(4800, 20, 10), torch.randint(0, 3, (4800,))
    vx, vy = torch.randn(800, 20, 10), torch.randint(0, 3, (800,))
    for epoch in range(3):
        losses = [] if not FIXED else torch.zeros(())
        for xb, yb in zip(x.split(48), y.split(48)):
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if FIXED:
                losses += loss.detach()
            else:
                losses.append(loss.item())
        if FIXED:
            model.eval()
        with torch.inference_mode():
            acc = (model(vx).argmax(1) == vy).float().mean()
        model.train()
        mean = losses.item() / 100 if FIXED else sum(losses) / len(losses)
        print(f"epoch {epoch} loss {mean:.3f} acc {acc.item():.3f}")


if __name__ == "__main__":
    main()
