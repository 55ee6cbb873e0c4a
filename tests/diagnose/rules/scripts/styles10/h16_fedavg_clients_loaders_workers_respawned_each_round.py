"""Federated averaging (FedAvg) simulated in one process: each round, every client loads the
global weights, trains one local epoch over its own DataLoader, and the server averages the
clients' weights. Clients hold non-IID generated tabular data.

Planted: each client's DataLoader has two workers but not `persistent_workers`: every round
each client's loader starts two worker processes for one short pass and shuts them down (8
clients x 2 workers per round). --fixed: the clients' loaders keep their workers
(`persistent_workers=True`).
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


class ClientData(Dataset):
    def __init__(self, n, shift):
        self.x = torch.randn(n, 32) + shift
        self.y = (self.x[:, :3].sum(1) > 3 * shift).long()

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i] * 1.0, self.y[i]


def make_model():
    return nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 2))


if __name__ == "__main__":
    torch.manual_seed(0)
    clients = [ClientData(256, shift=0.2 * c) for c in range(8)]
    loaders = [DataLoader(d, batch_size=64, shuffle=True, num_workers=2,
                          persistent_workers=FIXED) for d in clients]
    global_model, local = make_model(), make_model()
    for rnd in range(6):
        states = []
        for loader in loaders:
            local.load_state_dict(global_model.state_dict())
            opt = torch.optim.SGD(local.parameters(), lr=0.05)
            for xb, yb in loader:
                loss = nn.functional.cross_entropy(local(xb), yb)
                opt.zero_grad()
                loss.backward()
                opt.step()
            states.append({k: v.clone() for k, v in local.state_dict().items()})
        global_model.load_state_dict({k: torch.stack([s[k] for s in states]).mean(0)
                                      for k in states[0]})
        print("round", rnd, loss.item())
