"""CLEAN: a map-style dataset that decodes each sample from a compact uint8 store (a little real
per-sample work), loaded with one persistent worker and a prefetch of 4 batches, the loader
built once; evaluation under inference_mode at each epoch end. Nothing is planted (`--fixed`
changes nothing).
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Decoded(Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(0)
        self.store = torch.randint(0, 256, (n, 3, 16, 16), dtype=torch.uint8, generator=g)
        self.labels = torch.randint(0, 10, (n,), generator=g)

    def __len__(self):
        return len(self.store)

    def __getitem__(self, i):
        image = self.store[i].float().div_(255).sub_(0.5)
        return image, self.labels[i]


def main():
    torch.manual_seed(0)
    loader = DataLoader(Decoded(6400), batch_size=128, shuffle=True, num_workers=1,
                        persistent_workers=True, prefetch_factor=4)
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3,
                          padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(32, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    vx, vy = torch.randn(512, 3, 16, 16), torch.randint(0, 10, (512,))
    for epoch in range(3):
        model.train()
        for xb, yb in loader:
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        model.eval()
        with torch.inference_mode():
            acc = (model(vx).argmax(1) == vy).float().mean().item()
        print(epoch, acc)


if __name__ == "__main__":
    main()
