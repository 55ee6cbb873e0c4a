"""A two-stage pipeline: `pretrain()` learns an encoder with a SimSiam-like objective on
augmented image pairs (batches of 128 built in memory), then `finetune()` trains a linear head
and the last block on a small labelled subset through a DataLoader, and `main()` chains the
stages with a dict of stage configs.

Planted: the fine-tune stage's loader is the tutorial's: a custom Dataset over tensors in
memory, batch_size=4, num_workers=2: each 4-image batch is pickled between processes.
--fixed: batch_size=64, num_workers=0.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv
STAGES = {
    "pretrain": {"steps": 40, "batch": 128, "lr": 0.05},
    "finetune": {"epochs": 2, "batch": 64 if FIXED else 4, "workers": 0 if FIXED else 2},
}


class Labelled(Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def encoder():
    return nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1), nn.BatchNorm2d(32), nn.ReLU(),
                         nn.Conv2d(32, 64, 3, 2, 1), nn.BatchNorm2d(64), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten())


def augment(x):
    flip = torch.rand(len(x), 1, 1, 1) < 0.5
    x = torch.where(flip, x.flip(-1), x)
    return x * (0.8 + 0.4 * torch.rand(len(x), 3, 1, 1)) + 0.05 * torch.randn_like(x)


def pretrain(enc, images, cfg):
    proj = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64))
    pred = nn.Linear(64, 64)
    params = [*enc.parameters(), *proj.parameters(), *pred.parameters()]
    opt = torch.optim.SGD(params, lr=cfg["lr"], momentum=0.9)
    for step in range(cfg["steps"]):
        x = images[torch.randint(0, len(images), (cfg["batch"],))]
        z1, z2 = proj(enc(augment(x))), proj(enc(augment(x)))
        p1, p2 = pred(z1), pred(z2)
        loss = -(nn.functional.cosine_similarity(p1, z2.detach()).mean()
                 + nn.functional.cosine_similarity(p2, z1.detach()).mean()) / 2
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("pretrain", float(loss))


def finetune(enc, x, y, cfg):
    head = nn.Linear(64, 10)
    for p in enc[:4].parameters():
        p.requires_grad_(False)
    params = [p for p in enc.parameters() if p.requires_grad] + list(head.parameters())
    opt = torch.optim.Adam(params, lr=1e-3)
    loader = DataLoader(Labelled(x, y), batch_size=cfg["batch"], shuffle=True,
                        num_workers=cfg["workers"], persistent_workers=cfg["workers"] > 0)
    for epoch in range(cfg["epochs"]):
        for xb, yb in loader:
            loss = nn.functional.cross_entropy(head(enc(xb)), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("finetune", epoch, float(loss))


def main():
    torch.manual_seed(0)
    images = torch.randn(2048, 3, 16, 16)
    labels = torch.randint(0, 10, (2048,))
    enc = encoder()
    pretrain(enc, images, STAGES["pretrain"])
    finetune(enc, images[:1536], labels[:1536], STAGES["finetune"])


if __name__ == "__main__":
    main()
