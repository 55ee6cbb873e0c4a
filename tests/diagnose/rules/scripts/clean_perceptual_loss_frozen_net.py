"""CLEAN: an image-to-image generator trained in train mode with a perceptual loss: a frozen
feature network with BatchNorm and Dropout, kept in eval mode, runs on the generator's output
(the gradient flows through it to the generator; its own weights never train)."""

import torch
from torch import nn

torch.manual_seed(0)
generator = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                          nn.Conv2d(16, 3, 3, padding=1))
features = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                         nn.Dropout(0.2), nn.Conv2d(16, 16, 3, padding=1)).eval()
for p in features.parameters():
    p.requires_grad_(False)
opt = torch.optim.Adam(generator.parameters(), lr=1e-3)
for step in range(30):
    x = torch.randn(8, 3, 16, 16)
    target = x.flip(3)
    out = generator(x)
    loss = nn.functional.l1_loss(out, target) + nn.functional.mse_loss(features(out),
                                                                        features(target))
    opt.zero_grad()
    loss.backward()
    opt.step()
print(float(loss))
