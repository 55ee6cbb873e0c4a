"""A clean control: 4-fold cross-validation of an MLP where each fold's training rows are
indexed out once and batches are slices of a shuffled index (batches of 256), and each fold is
scored once under `torch.no_grad()` in eval mode (the model has Dropout). Nothing is planted;
`--fixed` runs the same program.
"""

import torch
from torch import nn

if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(24000, 64)
    y = (x[:, :4].sum(1) > 0).long()
    folds = torch.randperm(len(x)).chunk(4)
    scores = []
    for k in range(4):
        train = torch.cat([f for j, f in enumerate(folds) if j != k])
        tx, ty = x[train], y[train]
        model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Dropout(0.2), nn.Linear(256, 2))
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        for _epoch in range(2):
            model.train()
            for idx in torch.randperm(len(tx)).split(256):
                loss = nn.functional.cross_entropy(model(tx[idx]), ty[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
        model.eval()
        with torch.no_grad():
            scores.append(float((model(x[folds[k]]).argmax(1) == y[folds[k]]).float().mean()))
        print("fold", k, scores[-1])
    print("cv", sum(scores) / len(scores))
