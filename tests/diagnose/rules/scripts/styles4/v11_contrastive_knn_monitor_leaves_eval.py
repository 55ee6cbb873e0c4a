"""SimCLR-style contrastive learning with two augmented views per sample and an NT-Xent loss.
Every epoch a kNN monitor embeds a labelled bank with the encoder and scores nearest-neighbour
accuracy; the monitor helper puts the encoder in eval mode and does not put it back.

Planted: after the first epoch the encoder trains in eval mode (BatchNorm statistics frozen).
--fixed: the monitor restores the encoder's previous mode.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Encoder(nn.Module):
    def __init__(self, d_in=64, dim=256, proj=64):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(d_in, dim), nn.BatchNorm1d(dim), nn.ReLU(),
                                      nn.Linear(dim, dim), nn.BatchNorm1d(dim), nn.ReLU())
        self.projector = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, proj))

    def forward(self, x):
        return self.projector(self.backbone(x))


def augment(x):
    mask = (torch.rand_like(x) > 0.2).float()
    return x * mask + 0.1 * torch.randn_like(x)


def nt_xent(z1, z2, tau=0.2):
    z = nn.functional.normalize(torch.cat([z1, z2]), dim=1)
    sim = z @ z.t() / tau
    sim.fill_diagonal_(float("-inf"))
    n = len(z1)
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return nn.functional.cross_entropy(sim, targets)


@torch.no_grad()
def knn_monitor(encoder, bank_x, bank_y, query_x, query_y, k=5):
    was_training = encoder.training
    encoder.eval()
    bank = nn.functional.normalize(encoder.backbone(bank_x), dim=1)
    query = nn.functional.normalize(encoder.backbone(query_x), dim=1)
    idx = (query @ bank.t()).topk(k, dim=1).indices
    pred = bank_y[idx].mode(dim=1).values
    if FIXED:
        encoder.train(was_training)
    return (pred == query_y).float().mean().item()


def main():
    torch.manual_seed(0)
    x = torch.randn(6144, 64)
    labels = (x[:, 0] > 0).long() + (x[:, 1] > 0).long()
    encoder = Encoder()
    opt = torch.optim.SGD(encoder.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    for epoch in range(5):
        for xb in x[torch.randperm(len(x))].split(128):
            loss = nt_xent(encoder(augment(xb)), encoder(augment(xb)))
            opt.zero_grad()
            loss.backward()
            opt.step()
        acc = knn_monitor(encoder, x[:2048], labels[:2048], x[-512:], labels[-512:])
        print(f"epoch {epoch} loss {loss.item():.3f} knn acc {acc:.3f}")


if __name__ == "__main__":
    main()
