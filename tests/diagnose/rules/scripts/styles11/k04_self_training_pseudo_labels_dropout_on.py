"""Self-training with pseudo-labels: a text-like bag-of-embeddings classifier trained on a small
labelled set; after each epoch it labels a large unlabelled set, keeps the confident predictions
(max probability > 0.9) and trains on labelled + pseudo-labelled data in the next epoch.

Planted: `pseudo_label()` runs under `torch.no_grad()` but never calls `model.eval()`: the
teacher predictions come from the model in train mode, with Dropout(0.3) dropping features, so
the confidences are noisy and different from what the model would say. --fixed: eval() for the
labelling, train() after.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class BagClassifier(nn.Module):
    def __init__(self, vocab=5000, dim=128, classes=4):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.head = nn.Sequential(nn.Dropout(0.3), nn.Linear(dim, 256), nn.ReLU(),
                                  nn.Dropout(0.3), nn.Linear(256, classes))

    def forward(self, tokens):
        return self.head(self.emb(tokens))


@torch.no_grad()
def pseudo_label(model, tokens, threshold=0.9):
    if FIXED:
        model.eval()
    probs = torch.cat([model(chunk).softmax(-1) for chunk in tokens.split(512)])
    if FIXED:
        model.train()
    conf, labels = probs.max(-1)
    keep = conf > threshold
    return tokens[keep], labels[keep]


if __name__ == "__main__":
    torch.manual_seed(0)
    labelled_x = torch.randint(0, 5000, (1000, 40))
    labelled_y = labelled_x[:, 0] % 4
    unlabelled_x = torch.randint(0, 5000, (8000, 40))
    model = BagClassifier()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    train_x, train_y = labelled_x, labelled_y
    for epoch in range(6):
        perm = torch.randperm(len(train_x))
        for idx in perm.split(64):
            loss = nn.functional.cross_entropy(model(train_x[idx]), train_y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        px, py = pseudo_label(model, unlabelled_x)
        train_x = torch.cat([labelled_x, px])
        train_y = torch.cat([labelled_y, py])
        print("epoch", epoch, float(loss), "pseudo", len(px))
