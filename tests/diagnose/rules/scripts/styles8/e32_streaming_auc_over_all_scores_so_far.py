"""An online click-through model whose progress line shows the running ROC AUC over everything
seen so far (scores and labels of all past batches), computed from ranks with a sort; a
logistic-regression-plus-MLP ("wide and deep") model on hashed sparse features.

Planted: the scores and labels are appended with `torch.cat` onto tensors kept across steps, and
the AUC over all of them (a sort of the whole history) is recomputed every step, so each step
costs more than the one before. --fixed: a fixed-size window of the last 50 batches' scores.
"""

import sys
from collections import deque

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
BUCKETS, FIELDS = 2**14, 8


def roc_auc(scores, labels):
    order = scores.argsort()
    ranks = torch.empty_like(order, dtype=torch.float)
    ranks[order] = torch.arange(1, len(scores) + 1, dtype=torch.float)
    pos = labels.bool()
    n_pos = pos.sum()
    n_neg = len(labels) - n_pos
    return ((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg).clamp(min=1)).item()


class WideDeep(nn.Module):
    def __init__(self):
        super().__init__()
        self.wide = nn.EmbeddingBag(BUCKETS, 1, mode="sum")
        self.emb = nn.EmbeddingBag(BUCKETS, 16, mode="mean")
        self.deep = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, feats):
        return (self.wide(feats) + self.deep(self.emb(feats))).squeeze(1)


if __name__ == "__main__":
    torch.manual_seed(0)
    feats = torch.randint(0, BUCKETS, (400000, FIELDS))
    clicks = ((feats[:, 0] % 7 + feats[:, 1] % 5) < 4).float()
    model = WideDeep()
    opt = torch.optim.Adagrad(model.parameters(), lr=0.05)
    all_scores, all_labels = torch.empty(0), torch.empty(0)
    window = deque(maxlen=50)
    for step, idx in enumerate(torch.arange(len(feats)).split(512)):
        logits = model(feats[idx])
        loss = nn.functional.binary_cross_entropy_with_logits(logits, clicks[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if FIXED:
            window.append((logits.detach(), clicks[idx]))
            auc = roc_auc(torch.cat([s for s, _ in window]), torch.cat([c for _, c in window]))
        else:
            all_scores = torch.cat([all_scores, logits.detach()])
            all_labels = torch.cat([all_labels, clicks[idx]])
            auc = roc_auc(all_scores, all_labels)
        if step % 100 == 0:
            print(step, f"loss {loss.item():.4f} auc {auc:.4f}")
