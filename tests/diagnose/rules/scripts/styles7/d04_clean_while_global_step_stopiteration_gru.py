"""CLEAN: a `while global_step < max_steps` loop over a DataLoader iterator made once and rebuilt
only on `StopIteration`; a GRU classifier on token sequences from a Dataset with no workers;
progress printed every 100 steps. Nothing is planted (`--fixed` changes nothing).
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

VOCAB, SEQ = 1000, 40


class Tokens(Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randint(1, VOCAB, (n, SEQ), generator=g)
        self.y = (self.x[:, 0] > VOCAB // 2).long()

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 32)
        self.gru = nn.GRU(32, 64, batch_first=True)
        self.fc = nn.Linear(64, 2)

    def forward(self, t):
        return self.fc(self.gru(self.emb(t))[1][-1])


if __name__ == "__main__":
    torch.manual_seed(0)
    loader = DataLoader(Tokens(3000), batch_size=64, shuffle=True)
    model = Net()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    global_step, epoch, it = 0, 0, iter(loader)
    while global_step < 400:
        try:
            x, y = next(it)
        except StopIteration:
            epoch, it = epoch + 1, iter(loader)
            continue
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        global_step += 1
        if global_step % 100 == 0:
            print(epoch, global_step, loss.item())
