"""CLEAN: an argparse `main()`, a model registry and a Trainer class; float32, AdamW, batches of
128 sliced from in-memory tensors, evaluation once per epoch under inference_mode in eval mode,
loss read once per epoch. Nothing is planted (`--fixed` changes nothing).
"""

import argparse

import torch
from torch import nn

MODELS = {
    "mlp": lambda f, c: nn.Sequential(nn.Linear(f, 256), nn.ReLU(), nn.Dropout(0.1),
                                      nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, c)),
}


class Trainer:
    def __init__(self, model, lr):
        self.model = model
        self.opt = torch.optim.AdamW(model.parameters(), lr=lr)

    def train_epoch(self, x, y, batch):
        self.model.train()
        for idx in torch.randperm(len(x)).split(batch):
            loss = nn.functional.cross_entropy(self.model(x[idx]), y[idx])
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            self.opt.step()
        return loss.detach()

    @torch.inference_mode()
    def evaluate(self, x, y):
        self.model.eval()
        correct = sum((self.model(xb).argmax(1) == yb).sum() for xb, yb in
                      zip(x.split(512), y.split(512)))
        return correct / len(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="mlp")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--fixed", action="store_true")
    args = parser.parse_args()
    torch.manual_seed(0)
    x, y = torch.randn(8192, 64), torch.randint(0, 10, (8192,))
    xv, yv = torch.randn(1024, 64), torch.randint(0, 10, (1024,))
    trainer = Trainer(MODELS[args.model](64, 10), lr=1e-3)
    for epoch in range(args.epochs):
        loss = trainer.train_epoch(x, y, args.batch)
        print(epoch, float(loss), float(trainer.evaluate(xv, yv)))


if __name__ == "__main__":
    main()
