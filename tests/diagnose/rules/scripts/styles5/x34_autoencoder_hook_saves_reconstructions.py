"""A convolutional autoencoder whose trainer exposes `register_step_hook(fn)`; a "visualise"
hook registered from `main()` saves the batch's reconstructions and the model weights with
`torch.save` into the run directory after every step ("so that I can look at any step later").

Planted: torch.save of the reconstructions and the state_dict after every step. --fixed: the
hook saves every 200 steps.
"""

import os
import sys
import tempfile

import torch
from torch import nn

SAVE_EVERY = 200 if "--fixed" in sys.argv else 1


class AE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, 16, 3, stride=2, padding=1), nn.ReLU(),
                                 nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
                                 nn.Flatten(), nn.Linear(32 * 7 * 7, 256), nn.ReLU())
        self.dec = nn.Sequential(nn.Linear(256, 32 * 7 * 7), nn.ReLU(),
                                 nn.Unflatten(1, (32, 7, 7)),
                                 nn.ConvTranspose2d(32, 16, 4, stride=2, padding=1), nn.ReLU(),
                                 nn.ConvTranspose2d(16, 1, 4, stride=2, padding=1))

    def forward(self, x):
        return self.dec(self.enc(x))


class Trainer:
    def __init__(self, model):
        self.model, self.hooks, self.step = model, [], 0
        self.opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def register_step_hook(self, fn):
        self.hooks.append(fn)

    def train(self, images, epochs=2):
        for epoch in range(epochs):
            for idx in torch.randperm(len(images)).split(64):
                recon = self.model(images[idx])
                loss = nn.functional.mse_loss(recon, images[idx])
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
                self.step += 1
                for hook in self.hooks:
                    hook(self, recon.detach())
            print(epoch, loss.item())


def main(run_dir):
    torch.manual_seed(0)
    images = torch.rand(2048, 1, 28, 28)
    trainer = Trainer(AE())

    def visualise(trainer, recon):
        if trainer.step % SAVE_EVERY == 0:
            torch.save({"step": trainer.step, "recon": recon[:16],
                        "weights": trainer.model.state_dict()},
                       os.path.join(run_dir, "latest_vis.pt"))

    trainer.register_step_hook(visualise)
    trainer.train(images)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        main(tmp)
