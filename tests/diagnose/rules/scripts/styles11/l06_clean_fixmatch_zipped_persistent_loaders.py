"""A clean program: FixMatch-style semi-supervised learning zipping a labelled loader with an
unlabelled one, both with one persistent worker; the unlabelled loader is cycled with its own
iterator kept across epochs of the labelled one. --fixed: same program.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Augmenting(Dataset):
    def __init__(self, x, y=None):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        x = self.x[i]
        weak = x + 0.05 * torch.randn_like(x)
        if self.y is not None:
            return weak, self.y[i]
        return weak, x * (torch.rand_like(x) > 0.3) + 0.3 * torch.randn_like(x)


def forever(loader):
    while True:
        yield from loader


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(12000, 64)
    y = (x[:, :3].sum(1) > 0).long()
    labelled = DataLoader(Augmenting(x[:2000], y[:2000]), batch_size=64, shuffle=True,
                          num_workers=1, persistent_workers=True)
    unlabelled = forever(DataLoader(Augmenting(x[2000:]), batch_size=192, shuffle=True,
                                    num_workers=1, persistent_workers=True))
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.03, momentum=0.9, nesterov=True)
    for epoch in range(6):
        for (xl, yl), (weak, strong) in zip(labelled, unlabelled):
            sup = nn.functional.cross_entropy(model(xl), yl)
            with torch.no_grad():
                conf, pseudo = model(weak).softmax(-1).max(-1)
            unsup = (nn.functional.cross_entropy(model(strong), pseudo, reduction="none")
                     * (conf > 0.95).float()).mean()
            loss = sup + unsup
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
