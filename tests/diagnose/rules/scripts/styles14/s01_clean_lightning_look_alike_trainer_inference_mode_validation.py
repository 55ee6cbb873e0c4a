"""Clean: a LightningModule look-alike (training_step / validation_step / configure_optimizers)
driven by a tiny trainer that validates once per epoch under `torch.inference_mode()` with the
module in eval mode, float32, a reasonable batch. `--fixed` changes nothing.
"""

import torch
from torch import nn


class Module(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(128, 512), nn.ReLU(), nn.Dropout(0.1), nn.Linear(512, 10)
        )

    def training_step(self, batch):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def validation_step(self, batch):
        x, y = batch
        return (self.net(x).argmax(1) == y).float().sum()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-3)


def fit(module, train, val, epochs):
    opt = module.configure_optimizers()
    for epoch in range(epochs):
        module.train()
        for idx in torch.randperm(len(train[0])).split(128):
            loss = module.training_step((train[0][idx], train[1][idx]))
            opt.zero_grad()
            loss.backward()
            opt.step()
        module.eval()
        with torch.inference_mode():
            correct = sum(
                module.validation_step((xb, yb))
                for xb, yb in zip(val[0].split(512), val[1].split(512))
            )
        print("epoch", epoch, float(loss), float(correct) / len(val[0]))


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(9216, 128)
    y = x[:, :10].argmax(1)
    fit(Module(), (x[:8192], y[:8192]), (x[8192:], y[8192:]), epochs=3)
