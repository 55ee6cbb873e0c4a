"""One function runs every phase: `run_phase(model, batches, mode)` with mode in
{"train", "val", "test"}; it picks the module mode, the grad mode and whether to step from the
`mode` string. A tabular classifier (categorical embeddings + numeric features), validated after
every epoch on a held-out split four times the size of an epoch's training slice.

Planted: the grad switch is `torch.set_grad_enabled(mode != "test")`, so validation builds the
autograd graph for every batch (the author thought of "test" as the only no-grad phase).
--fixed: `torch.set_grad_enabled(mode == "train")`.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
CATS, NUMS = [50, 20, 8, 12], 16


class TabularNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.embs = nn.ModuleList(nn.Embedding(c, 8) for c in CATS)
        self.mlp = nn.Sequential(
            nn.Linear(8 * len(CATS) + NUMS, 256), nn.ReLU(), nn.Dropout(0.1),
            nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 2),
        )

    def forward(self, cats, nums):
        e = [emb(cats[:, i]) for i, emb in enumerate(self.embs)]
        return self.mlp(torch.cat([*e, nums], 1))


def make_split(n, g):
    cats = torch.stack([torch.randint(0, c, (n,), generator=g) for c in CATS], 1)
    nums = torch.randn(n, NUMS, generator=g)
    y = ((cats[:, 0] % 3 == 0) ^ (nums[:, 0] > 0)).long()
    return list(zip(cats.split(128), nums.split(128), y.split(128)))


def run_phase(model, batches, mode, opt=None):
    model.train(mode == "train")
    grad_on = mode == "train" if FIXED else mode != "test"
    total, correct, seen = 0.0, 0, 0
    with torch.set_grad_enabled(grad_on):
        for cats, nums, y in batches:
            logits = model(cats, nums)
            loss = nn.functional.cross_entropy(logits, y)
            if mode == "train":
                opt.zero_grad()
                loss.backward()
                opt.step()
            total += float(loss) * len(y)
            correct += int((logits.argmax(1) == y).sum())
            seen += len(y)
    return total / seen, correct / seen


if __name__ == "__main__":
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    train, val, test = make_split(6000, g), make_split(24000, g), make_split(4000, g)
    model = TabularNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(4):
        run_phase(model, train, "train", opt)
        print(epoch, "val", run_phase(model, val, "val"))
    print("test", run_phase(model, test, "test"))
