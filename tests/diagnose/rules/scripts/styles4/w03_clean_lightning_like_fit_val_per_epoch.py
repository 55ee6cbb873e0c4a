"""CLEAN: a Lightning-like module (training_step / validation_step / configure_optimizers with a
StepLR scheduler) driven by a hand-written fit loop: validation once per epoch in eval mode under
no_grad, early stopping on the validation loss with a state_dict copy only on improvement.
Nothing is planted (`--fixed` changes nothing).
"""

import copy

import torch
from torch import nn


class LitModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(20, 256), nn.BatchNorm1d(256), nn.ReLU(),
                                 nn.Dropout(0.2), nn.Linear(256, 256), nn.ReLU(),
                                 nn.Linear(256, 1))

    def training_step(self, batch):
        x, y = batch
        return nn.functional.mse_loss(self.net(x).squeeze(1), y)

    def validation_step(self, batch):
        return self.training_step(batch)

    def configure_optimizers(self):
        opt = torch.optim.Adam(self.parameters(), lr=1e-3)
        return opt, torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)


def fit(module, train, val, epochs, patience=3):
    opt, sched = module.configure_optimizers()
    best, best_state, bad = float("inf"), None, 0
    for epoch in range(epochs):
        module.train()
        for batch in train:
            loss = module.training_step(batch)
            opt.zero_grad()
            loss.backward()
            opt.step()
        sched.step()
        module.eval()
        with torch.no_grad():
            val_loss = torch.stack([module.validation_step(b) for b in val]).mean().item()
        if val_loss < best:
            best, best_state, bad = val_loss, copy.deepcopy(module.state_dict()), 0
        else:
            bad += 1
            if bad >= patience:
                break
        print(epoch, val_loss)
    module.load_state_dict(best_state)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(10240, 20)
    y = x[:, :5].sum(1)
    train = list(zip(x[:8192].split(64), y[:8192].split(64)))
    val = list(zip(x[8192:].split(512), y[8192:].split(512)))
    fit(LitModel(), train, val, epochs=4)
