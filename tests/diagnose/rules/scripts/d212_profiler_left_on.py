"""A torch.profiler context left around the whole training loop."""

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                          nn.Linear(64, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for step in range(300):
            x, y = torch.randn(64, 32), torch.randint(0, 2, (64,))
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    print(prof.key_averages().table(row_limit=5))


if __name__ == "__main__":
    main()
