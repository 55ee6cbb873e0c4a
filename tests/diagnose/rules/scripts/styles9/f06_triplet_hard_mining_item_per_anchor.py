"""Metric learning with a triplet margin loss and batch-hard mining: each batch holds P classes x
K samples, embeddings are L2-normalised, and for every anchor the hardest positive and hardest
negative are chosen from the pairwise distance matrix.

Planted: the mining loop picks each anchor's hardest positive and negative with
`dist[i][pos].max().item()` / `.argmax().item()` per anchor, a host read per anchor (64 per step).
--fixed: masked max/min over the whole distance matrix, no per-anchor reads.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
P, K, CLASSES, DIM = 16, 4, 50, 64


def sample_pk(labels_by_class, g):
    classes = torch.randperm(CLASSES, generator=g)[:P]
    idx = [labels_by_class[c][torch.randint(len(labels_by_class[c]), (K,), generator=g)]
           for c in classes.tolist()]
    return torch.cat(idx)


def mine_python(dist, labels):
    anchors, positives, negatives = [], [], []
    for i in range(len(labels)):
        same = (labels == labels[i]).nonzero().squeeze(1)
        other = (labels != labels[i]).nonzero().squeeze(1)
        p = same[dist[i][same].argmax().item()].item()
        n = other[dist[i][other].argmin().item()].item()
        anchors.append(i)
        positives.append(p)
        negatives.append(n)
    return anchors, positives, negatives


def hardest_losses(dist, labels, margin=0.3):
    same = labels[:, None] == labels[None, :]
    hardest_pos = (dist * same).max(1).values
    hardest_neg = dist.masked_fill(same, float("inf")).min(1).values
    return nn.functional.relu(hardest_pos - hardest_neg + margin).mean()


if __name__ == "__main__":
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    labels_all = torch.randint(0, CLASSES, (10000,), generator=g)
    centres = torch.randn(CLASSES, 32, generator=g)
    x_all = centres[labels_all] + 0.7 * torch.randn(10000, 32, generator=g)
    by_class = [(labels_all == c).nonzero().squeeze(1) for c in range(CLASSES)]
    net = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, DIM))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    loss_fn = nn.TripletMarginLoss(margin=0.3)
    for epoch in range(3):
        for _ in range(60):
            idx = sample_pk(by_class, g)
            emb = nn.functional.normalize(net(x_all[idx]), dim=1)
            labels = labels_all[idx]
            dist = torch.cdist(emb, emb)
            if FIXED:
                loss = hardest_losses(dist, labels)
            else:
                a, p, n = mine_python(dist.detach(), labels)
                loss = loss_fn(emb[a], emb[p], emb[n])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
