"""A Catalyst-like `Runner` written by the author: the user subclasses it and overrides
`handle_batch(batch)`; the runner iterates over a dict of named loaders (`{"train": ...,
"valid": ...}`), calls `on_loader_start` / `on_loader_end`, and keeps per-loader metrics. A
text classifier (EmbeddingBag + MLP with Dropout) on generated token bags.

Planted: `on_loader_start` writes `self.model.eval` without the call parentheses for the valid
loader: nothing happens, and validation runs with Dropout active (its accuracy is noisy and
low). --fixed: `self.model.eval()`.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Runner:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def on_loader_start(self):
        self.metrics = {"correct": 0, "seen": 0}
        if self.is_train_loader:
            self.model.train()

    def on_loader_end(self):
        print(self.epoch, self.loader_key, self.metrics["correct"] / self.metrics["seen"])

    def run(self, loaders, num_epochs):
        for self.epoch in range(num_epochs):
            for self.loader_key, loader in loaders.items():
                self.is_train_loader = self.loader_key == "train"
                self.on_loader_start()
                with torch.set_grad_enabled(self.is_train_loader):
                    for batch in loader:
                        self.handle_batch(batch)
                self.on_loader_end()


class ClassifierRunner(Runner):
    def on_loader_start(self):
        super().on_loader_start()
        if not self.is_train_loader:
            if FIXED:
                self.model.eval()
            else:
                self.model.eval  # noqa: B018

    def handle_batch(self, batch):
        tokens, offsets, labels = batch
        logits = self.model(tokens, offsets)
        if self.is_train_loader:
            loss = nn.functional.cross_entropy(logits, labels)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        self.metrics["correct"] += (logits.argmax(1) == labels).sum().item()
        self.metrics["seen"] += len(labels)


class BagClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(5000, 128)
        self.mlp = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Dropout(0.5),
                                 nn.Linear(256, 4))

    def forward(self, tokens, offsets):
        return self.mlp(self.bag(tokens, offsets))


def bags(n, batch):
    out = []
    for _ in range(n // batch):
        tokens = torch.randint(0, 5000, (batch * 20,))
        offsets = torch.arange(0, batch * 20, 20)
        labels = tokens.view(batch, 20)[:, 0] % 4
        out.append((tokens, offsets, labels))
    return out


if __name__ == "__main__":
    torch.manual_seed(0)
    model = BagClassifier()
    runner = ClassifierRunner(model, torch.optim.Adam(model.parameters(), lr=1e-3))
    runner.run({"train": bags(4096, 64), "valid": bags(2048, 64)}, num_epochs=3)
