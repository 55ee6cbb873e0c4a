"""Point-cloud part segmentation (a per-point MLP with a global feature concatenated back); a
running per-class IoU table is kept for the progress display.

Planted: every step, the IoU of each of the 8 classes is read to Python with `float()` (8
host reads, each a synchronization on an accelerator) to update the table.
--fixed: the per-class intersections and unions are accumulated as tensors and read once per
epoch.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
CLASSES = 8


class SegNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.local = nn.Sequential(nn.Linear(3, 64), nn.ReLU(), nn.Linear(64, 64))
        self.head = nn.Sequential(nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, CLASSES))

    def forward(self, pts):
        f = self.local(pts)
        g = f.amax(1, keepdim=True).expand_as(f)
        return self.head(torch.cat([f, g], -1))


if __name__ == "__main__":
    torch.manual_seed(0)
    pts = torch.randn(1024, 256, 3)
    labels = (pts[..., 0] > 0).long() * 4 + (pts[..., 1] > 0).long() * 2 + (pts[..., 2] > 0).long()
    model = SegNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        iou_table = {c: 0.0 for c in range(CLASSES)}
        inter = torch.zeros(CLASSES)
        union = torch.zeros(CLASSES)
        for idx in torch.randperm(len(pts)).split(16):
            logits = model(pts[idx])
            loss = nn.functional.cross_entropy(logits.reshape(-1, CLASSES), labels[idx].reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            pred, true = logits.argmax(-1), labels[idx]
            for c in range(CLASSES):
                i = ((pred == c) & (true == c)).sum()
                u = ((pred == c) | (true == c)).sum()
                if FIXED:
                    inter[c] += i
                    union[c] += u
                else:
                    iou_table[c] = 0.9 * iou_table[c] + 0.1 * float(i / u.clamp(min=1))
        if FIXED:
            iou_table = dict(enumerate((inter / union.clamp(min=1)).tolist()))
        print("epoch", epoch, float(loss), {c: round(v, 2) for c, v in iou_table.items()})
