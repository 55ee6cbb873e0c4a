"""An audio autoencoder over log-mel-like spectrograms, with its losses as plugins: a registry
maps names to loss functions (reconstruction, spectral convergence, a latent penalty) and the
step asks each plugin for its term. Spectrograms are computed from generated waveforms once.

Planted: the step calls `.backward(retain_graph=True)` once per plugin ("so each loss can be
weighted and logged on its own"): three backward passes through one graph every step.
--fixed: the terms are summed and one backward runs.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
LOSSES = {}


def loss_plugin(name, weight):
    def register(fn):
        LOSSES[name] = (fn, weight)
        return fn
    return register


@loss_plugin("recon", 1.0)
def recon(spec, out, z):
    return nn.functional.l1_loss(out, spec)


@loss_plugin("spectral", 0.5)
def spectral(spec, out, z):
    return torch.norm(spec - out) / torch.norm(spec)


@loss_plugin("latent", 0.01)
def latent(spec, out, z):
    return z.pow(2).mean()


class SpecAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv1d(64, 128, 3, padding=1), nn.GELU(),
                                 nn.Conv1d(128, 32, 3, padding=1))
        self.dec = nn.Sequential(nn.Conv1d(32, 128, 3, padding=1), nn.GELU(),
                                 nn.Conv1d(128, 64, 3, padding=1))

    def forward(self, spec):
        z = self.enc(spec)
        return self.dec(z), z


if __name__ == "__main__":
    torch.manual_seed(0)
    wave = torch.randn(512, 8000)
    window = torch.hann_window(254)
    spec = torch.stft(wave, 254, 125, window=window, return_complex=True).abs()[:, :64]
    spec = torch.log1p(spec)
    model = SpecAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(300):
        idx = torch.randint(0, len(spec), (32,))
        out, z = model(spec[idx])
        opt.zero_grad()
        terms = {name: w * fn(spec[idx], out, z) for name, (fn, w) in LOSSES.items()}
        if FIXED:
            sum(terms.values()).backward()
        else:
            for term in terms.values():
                term.backward(retain_graph=True)
        opt.step()
        if step % 100 == 0:
            print(step, {k: round(float(v), 4) for k, v in terms.items()})
