"""A contrastive-style loop whose dataset augments each image with a blur made of Conv2d
modules run under no_grad (as SimCLR's GaussianBlur does), loaded in the main process; the
model trained on the views has BatchNorm layers."""

import torch
from torch import nn


class Blur:
    def __init__(self):
        self.conv = nn.Conv2d(3, 3, 5, padding=2, bias=False, groups=3)
        self.conv.weight.data.fill_(1 / 25)

    def __call__(self, image):
        with torch.no_grad():
            return self.conv(image.unsqueeze(0)).squeeze(0)


class Views(torch.utils.data.Dataset):
    def __init__(self):
        self.images = torch.rand(512, 3, 32, 32)
        self.blur = Blur()

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        image = self.images[index]
        return [self.blur(image), self.blur(image.flip(-1))], 0


def main():
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 32),
    )  # fmt: skip
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = torch.utils.data.DataLoader(Views(), batch_size=16, shuffle=True, drop_last=True)
    for _epoch in range(2):
        for views, _ in loader:
            features = nn.functional.normalize(model(torch.cat(views)), dim=1)
            logits = features @ features.T / 0.1
            targets = torch.arange(len(logits)).roll(len(logits) // 2)
            loss = nn.functional.cross_entropy(logits.fill_diagonal_(-1e9), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
