"""CLEAN: a two-tower retrieval model whose collate_fn stacks the batch with whole-batch ops and
draws negatives with one torch.randint; the loader runs in the main process over a list of
pairs. Nothing is planted (`--fixed` changes nothing).
"""

import torch
from torch import nn
from torch.utils.data import DataLoader

USERS, ITEMS, NEG = 2000, 5000, 20


def collate(pairs):
    both = torch.tensor(pairs)
    return both[:, 0], both[:, 1], torch.randint(0, ITEMS, (len(pairs), NEG))


class Towers(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.users, self.items = nn.Embedding(USERS, dim), nn.Embedding(ITEMS, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 128), nn.ReLU(), nn.Linear(128, dim))

    def forward(self, u, items):
        return (self.mlp(self.users(u)).unsqueeze(1) * self.items(items)).sum(-1)


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    pairs = list(zip(torch.randint(0, USERS, (16000,), generator=g).tolist(),
                     torch.randint(0, ITEMS, (16000,), generator=g).tolist()))
    loader = DataLoader(pairs, batch_size=256, shuffle=True, collate_fn=collate)
    model = Towers()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for u, pos, neg in loader:
            scores = model(u, torch.cat([pos[:, None], neg], 1))
            loss = nn.functional.cross_entropy(scores, torch.zeros(len(u), dtype=torch.long))
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
