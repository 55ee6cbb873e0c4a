"""Clean: metric learning with batch-hard triplet mining done on the whole distance matrix
(masked max and min), P x K batches, and metrics (loss sum, fraction of active triplets) kept as
detached tensors added up on every step and read with `.item()` once per epoch.

No planted problem; `--fixed` changes nothing (kept for the bench's control run).
"""

import torch
from torch import nn

P, K, CLASSES = 16, 4, 50

if __name__ == "__main__":
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    labels_all = torch.randint(0, CLASSES, (10000,), generator=g)
    centres = torch.randn(CLASSES, 32, generator=g)
    x_all = centres[labels_all] + 0.7 * torch.randn(10000, 32, generator=g)
    by_class = [(labels_all == c).nonzero().squeeze(1) for c in range(CLASSES)]
    net = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 64))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    for epoch in range(3):
        total, active = torch.zeros(()), torch.zeros(())
        for _ in range(60):
            classes = torch.randperm(CLASSES, generator=g)[:P].tolist()
            idx = torch.cat([by_class[c][torch.randint(len(by_class[c]), (K,), generator=g)]
                             for c in classes])
            emb = nn.functional.normalize(net(x_all[idx]), dim=1)
            labels = labels_all[idx]
            dist = torch.cdist(emb, emb)
            same = labels[:, None] == labels[None, :]
            hardest_pos = (dist * same).max(1).values
            hardest_neg = dist.masked_fill(same, float("inf")).min(1).values
            per_anchor = nn.functional.relu(hardest_pos - hardest_neg + 0.3)
            loss = per_anchor.mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.detach()
            active += (per_anchor > 0).float().mean().detach()
        print("epoch", epoch, (total / 60).item(), (active / 60).item())
