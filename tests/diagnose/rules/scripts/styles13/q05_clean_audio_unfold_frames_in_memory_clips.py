"""Clean: keyword spotting on generated 1-second clips held in memory; the model frames each
batch with `unfold` (one op), applies a Hann window and a learned filterbank, log-compresses and
pools; a small 1D CNN on top. Batches sliced by a permutation; evaluation once per epoch under
`inference_mode` in `eval()` mode. (`--fixed` changes nothing.)
"""

import torch
from torch import nn

WIN, HOP = 128, 64


class Frontend(nn.Module):
    def __init__(self, bands=32):
        super().__init__()
        self.register_buffer("window", torch.hann_window(WIN))
        self.filters = nn.Linear(WIN, bands)

    def forward(self, wave):
        frames = wave.unfold(1, WIN, HOP) * self.window
        return self.filters(frames).abs().log1p().transpose(1, 2)


if __name__ == "__main__":
    torch.manual_seed(0)
    t = torch.arange(4000) / 4000
    labels = torch.randint(0, 8, (3000,))
    waves = torch.sin(2 * torch.pi * (150 + 90 * labels[:, None]) * t) + 0.3 * torch.randn(
        3000, 4000
    )
    model = nn.Sequential(
        Frontend(),
        nn.Conv1d(32, 64, 5, padding=2),
        nn.ReLU(),
        nn.Dropout(0.1),
        nn.AdaptiveAvgPool1d(1),
        nn.Flatten(),
        nn.Linear(64, 8),
    )
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, foreach=True)
    for epoch in range(3):
        for idx in torch.randperm(2500).split(64):
            loss = nn.functional.cross_entropy(model(waves[idx]), labels[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        model.eval()
        with torch.inference_mode():
            acc = (model(waves[2500:]).argmax(1) == labels[2500:]).float().mean()
        model.train()
        print("epoch", epoch, float(loss), float(acc))
