"""Image classification with per-sample NumPy augmentation and the default num_workers=0."""

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class AugmentedImages(Dataset):
    def __init__(self, n=2048):
        rng = np.random.default_rng(0)
        self.images = rng.integers(0, 256, size=(n, 40, 40, 3), dtype=np.uint8)
        self.labels = rng.integers(0, 10, size=n)
        self.mean = np.array([0.49, 0.48, 0.45], dtype=np.float32)
        self.std = np.array([0.25, 0.24, 0.26], dtype=np.float32)
        self.rng = np.random.default_rng(1)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        top, left = self.rng.integers(0, 9, size=2)
        img = self.images[i, top:top + 32, left:left + 32]  # random crop
        if self.rng.random() < 0.5:
            img = img[:, ::-1]  # horizontal flip
        img = (img.astype(np.float32) / 255.0 - self.mean) / self.std
        return torch.from_numpy(np.ascontiguousarray(img.transpose(2, 0, 1))), int(self.labels[i])


def main():
    torch.manual_seed(0)
    loader = DataLoader(AugmentedImages(), batch_size=64, shuffle=True)
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 256), nn.ReLU(), nn.Linear(256, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(2):
        for images, labels in loader:
            optimizer.zero_grad()
            loss = criterion(model(images), labels)
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
