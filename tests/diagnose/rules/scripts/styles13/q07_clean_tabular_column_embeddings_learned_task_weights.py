"""Clean: a tabular model with one embedding per categorical column (a `ModuleDict`), two task
heads weighted by learned log-variances (uncertainty weighting: the weights are parameters,
one summed loss, one backward), batches sliced from in-memory tensors, the input checked
once before training, metrics kept as Python floats once per epoch. (`--fixed` changes
nothing.)
"""

import torch
from torch import nn

CARDS = {"store": 60, "item": 200, "weekday": 7, "promo": 2, "region": 12}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embs = nn.ModuleDict({c: nn.Embedding(n, 8) for c, n in CARDS.items()})
        self.trunk = nn.Sequential(nn.Linear(8 * len(CARDS), 128), nn.ReLU())
        self.sales, self.churn = nn.Linear(128, 1), nn.Linear(128, 1)
        self.log_vars = nn.Parameter(torch.zeros(2))

    def forward(self, cats):
        z = self.trunk(torch.cat([self.embs[c](cats[:, k]) for k, c in enumerate(CARDS)], 1))
        return self.sales(z).squeeze(1), self.churn(z).squeeze(1)


if __name__ == "__main__":
    torch.manual_seed(0)
    cats = torch.stack([torch.randint(0, n, (30000,)) for n in CARDS.values()], 1)
    sales = (cats[:, 0] % 5).float() + cats[:, 3]
    churn = (cats[:, 2] > 4).float()
    assert all(int(cats[:, k].max()) < n for k, n in enumerate(CARDS.values()))
    model = Model()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3, foreach=True)
    for epoch in range(3):
        for idx in torch.randperm(len(cats)).split(256):
            pred_sales, pred_churn = model(cats[idx])
            l1 = nn.functional.mse_loss(pred_sales, sales[idx])
            l2 = nn.functional.binary_cross_entropy_with_logits(pred_churn, churn[idx])
            loss = (
                torch.exp(-model.log_vars[0]) * l1
                + model.log_vars[0]
                + torch.exp(-model.log_vars[1]) * l2
                + model.log_vars[1]
            )
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
