"""A molecular property regressor on generated "molecules" stored as SMILES-like strings
(atoms and bonds written as text). The `Dataset.__getitem__` parses the string into atom types
and an edge list, builds a dense normalised adjacency with Python loops, and the model is a
two-layer dense GCN with a sum readout; graphs are padded to 32 atoms.

Planted: the parse and the adjacency build (nested loops over atoms and bonds, degree
normalisation entry by entry) run per sample on every fetch, with no cache: the same strings are
parsed again every epoch. --fixed: the dataset parses every molecule once in `__init__` and
`__getitem__` returns the stored tensors.
"""

import random
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv
ATOMS = "CNOSFP"
N = 32


def random_molecule(rng):
    n = rng.randint(10, N)
    atoms = "".join(rng.choice(ATOMS) for _ in range(n))
    bonds = [(i, i + 1) for i in range(n - 1)] + [(rng.randrange(n), rng.randrange(n))
                                                     for _ in range(n // 3)]
    return atoms + "|" + ";".join(f"{a}-{b}" for a, b in bonds)


def parse(text):
    atoms, bonds = text.split("|")
    types = [ATOMS.index(a) for a in atoms]
    adj = [[0.0] * N for _ in range(N)]
    for bond in bonds.split(";"):
        a, b = (int(v) for v in bond.split("-"))
        adj[a][b] = adj[b][a] = 1.0
    for i in range(len(types)):
        adj[i][i] = 1.0
    deg = [sum(row) or 1.0 for row in adj]
    norm = [[adj[i][j] / (deg[i] * deg[j]) ** 0.5 for j in range(N)] for i in range(N)]
    x = torch.zeros(N, len(ATOMS))
    x[torch.arange(len(types)), torch.tensor(types)] = 1.0
    return x, torch.tensor(norm), float(sum(types)) / 10


class Molecules(Dataset):
    def __init__(self, n):
        rng = random.Random(0)
        self.texts = [random_molecule(rng) for _ in range(n)]
        self.parsed = [parse(t) for t in self.texts] if FIXED else None

    def __len__(self):
        return len(self.texts)

    def __getitem__(self, i):
        return self.parsed[i] if FIXED else parse(self.texts[i])


class DenseGCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2 = nn.Linear(len(ATOMS), 64), nn.Linear(64, 64)
        self.out = nn.Linear(64, 1)

    def forward(self, x, adj):
        h = torch.relu(adj @ self.l1(x))
        h = torch.relu(adj @ self.l2(h))
        return self.out(h.sum(1)).squeeze(-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    loader = DataLoader(Molecules(3000), batch_size=64, shuffle=True)
    model = DenseGCN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        for x, adj, y in loader:
            loss = nn.functional.mse_loss(model(x, adj), y.float())
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
