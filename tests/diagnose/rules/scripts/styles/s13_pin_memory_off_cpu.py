"""A CPU-only run with pin_memory left off (it does not apply without CUDA): must stay silent.

Both variants are clean; --fixed changes nothing but the flag.
"""

import torch
from torch import nn
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, TensorDataset


def main():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    ds = TensorDataset(torch.randn(4096, 64), torch.randint(0, 4, (4096,)))
    loader = DataLoader(ds, batch_size=None, pin_memory=False,
                        sampler=BatchSampler(RandomSampler(ds), 128, drop_last=True))
    mdl = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 4)).to(device)
    opt = torch.optim.AdamW(mdl.parameters(), lr=1e-3, foreach=True)
    for _ in range(3):
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            opt.zero_grad(set_to_none=True)
            nn.functional.cross_entropy(mdl(xb), yb).backward()
            opt.step()


if __name__ == "__main__":
    main()
