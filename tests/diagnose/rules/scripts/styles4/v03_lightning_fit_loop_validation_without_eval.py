"""A Lightning-like module (`training_step`, `validation_step`, `configure_optimizers`) driven by a
hand-written `fit()` loop. The loop runs the validation batches under torch.no_grad() at the end
of each epoch but never switches the module to eval mode, so Dropout stays active while
validating.

Planted: validation in train mode (Dropout on). --fixed: fit() calls module.eval() before the
validation loop and module.train() after it.
"""

import sys

import torch
from torch import nn


class LitClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(40, 256), nn.ReLU(), nn.Dropout(0.3),
                                 nn.Linear(256, 256), nn.ReLU(), nn.Dropout(0.3),
                                 nn.Linear(256, 6))

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return (self(x).argmax(1) == y).float().mean()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05, momentum=0.9)


def fit(module, train_batches, val_batches, max_epochs, eval_mode):
    optimizer = module.configure_optimizers()
    for epoch in range(max_epochs):
        module.train()
        for i, batch in enumerate(train_batches):
            loss = module.training_step(batch, i)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if eval_mode:
            module.eval()
        with torch.no_grad():
            accs = [module.validation_step(b, i) for i, b in enumerate(val_batches)]
        print(f"epoch {epoch}: val_acc={torch.stack(accs).mean():.3f}")


if __name__ == "__main__":
    torch.manual_seed(0)
    x, y = torch.randn(4096, 40), torch.randint(0, 6, (4096,))
    train = list(zip(x[:3072].split(64), y[:3072].split(64)))
    val = list(zip(x[3072:].split(256), y[3072:].split(256)))
    fit(LitClassifier(), train, val, max_epochs=5, eval_mode="--fixed" in sys.argv)
