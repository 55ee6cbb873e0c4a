"""Clean: a convolutional beta-VAE with cyclical KL annealing (beta ramps from 0 to 4 over each
cycle of 100 steps), trained on synthetic 1x16x16 blobs; reconstructions scored on a held-out set
once per epoch under `torch.no_grad()`."""

import torch
from torch import nn


class ConvVAE(nn.Module):
    def __init__(self, z=8):
        super().__init__()
        self.enc = nn.Sequential(
            nn.Conv2d(1, 16, 4, 2, 1),
            nn.ReLU(),
            nn.Conv2d(16, 32, 4, 2, 1),
            nn.ReLU(),
            nn.Flatten(),
        )
        self.stats = nn.Linear(32 * 16, 2 * z)
        self.dec_in = nn.Linear(z, 32 * 16)
        self.dec = nn.Sequential(
            nn.ConvTranspose2d(32, 16, 4, 2, 1), nn.ReLU(), nn.ConvTranspose2d(16, 1, 4, 2, 1)
        )

    def forward(self, x):
        mu, logvar = self.stats(self.enc(x)).chunk(2, 1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return self.dec(self.dec_in(z).view(-1, 32, 4, 4)), mu, logvar


def blobs(n, g):
    yy, xx = torch.meshgrid(torch.arange(16.0), torch.arange(16.0), indexing="ij")
    c = torch.rand(n, 2, generator=g) * 12 + 2
    r = torch.rand(n, generator=g) * 3 + 1
    d = (yy[None] - c[:, 0, None, None]) ** 2 + (xx[None] - c[:, 1, None, None]) ** 2
    return torch.sigmoid(r[:, None, None] ** 2 - d)[:, None]


if __name__ == "__main__":
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    train, test = blobs(8000, g), blobs(1000, g)
    vae = ConvVAE()
    opt = torch.optim.Adam(vae.parameters(), lr=1e-3)
    step = 0
    for epoch in range(2):
        vae.train()
        for xb in train[torch.randperm(len(train))].split(64):
            recon, mu, logvar = vae(xb)
            rec = nn.functional.binary_cross_entropy_with_logits(recon, xb, reduction="sum") / len(
                xb
            )
            kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(1).mean()
            beta = 4.0 * min(1.0, (step % 100) / 50)
            loss = rec + beta * kl
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
        vae.eval()
        with torch.no_grad():
            test_rec = nn.functional.binary_cross_entropy_with_logits(vae(test)[0], test).item()
        print("epoch", epoch, "test recon", test_rec)
