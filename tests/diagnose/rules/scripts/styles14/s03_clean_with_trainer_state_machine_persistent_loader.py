"""Clean: `with Trainer(...) as t` whose `fit` is a small state machine; the loader over an
augmenting dataset is built once in `__enter__` with one persistent worker (one core left to
the training process on this two-core machine) and reused every epoch. `--fixed` changes
nothing.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Augmented(Dataset):
    def __init__(self, n=4096):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 3, 24, 24, generator=g)
        self.y = torch.randint(0, 4, (n,), generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        img = self.x[i]
        return (img.flip(2) if i % 2 else img), self.y[i]


class Trainer:
    def __enter__(self):
        self.model = nn.Sequential(
            nn.Conv2d(3, 32, 3),
            nn.ReLU(),
            nn.Conv2d(32, 32, 3),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Linear(32, 4),
        )
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.loader = DataLoader(
            Augmented(), batch_size=128, shuffle=True, num_workers=1, persistent_workers=True
        )
        return self

    def fit(self, epochs):
        state, epoch, it = "start", 0, None
        while state != "done":
            if state == "start":
                it, state = iter(self.loader), "step"
            elif state == "step":
                batch = next(it, None)
                if batch is None:
                    state = "end"
                    continue
                loss = nn.functional.cross_entropy(self.model(batch[0]), batch[1])
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            else:
                print("epoch", epoch, float(loss))
                epoch += 1
                state = "done" if epoch == epochs else "start"

    def __exit__(self, *exc):
        return False


if __name__ == "__main__":
    torch.manual_seed(0)
    with Trainer() as t:
        t.fit(3)
