"""A Hugging Face-style model that returns a dataclass output with the loss inside, and a small
`Trainer`-like class written in plain torch with callbacks; an `EvalCallback` runs the evaluation
set at the end of every epoch.

Planted: the callback's evaluation runs with autograd on (no no_grad / inference_mode), so every
eval forward records a graph that nobody uses. --fixed: the evaluation runs under
torch.inference_mode().
"""

import contextlib
import sys
from dataclasses import dataclass
from typing import Optional

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


@dataclass
class SequenceClassifierOutput:
    loss: Optional[torch.Tensor]
    logits: torch.Tensor


class TinyBertForSequenceClassification(nn.Module):
    def __init__(self, vocab=2000, dim=128, labels=5):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, 4, 256, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.classifier = nn.Linear(dim, labels)

    def forward(self, input_ids, labels=None):
        hidden = self.encoder(self.embeddings(input_ids))
        logits = self.classifier(hidden[:, 0])
        loss = nn.functional.cross_entropy(logits, labels) if labels is not None else None
        return SequenceClassifierOutput(loss=loss, logits=logits)


class TrainerCallback:
    def on_step_end(self, trainer, step): ...
    def on_epoch_end(self, trainer, epoch): ...


class EvalCallback(TrainerCallback):
    def __init__(self, eval_batches):
        self.eval_batches = eval_batches

    def on_epoch_end(self, trainer, epoch):
        trainer.model.eval()
        guard = torch.inference_mode() if FIXED else contextlib.nullcontext()
        total, correct = 0, 0
        with guard:
            for batch in self.eval_batches:
                out = trainer.model(**batch)
                correct += int((out.logits.argmax(-1) == batch["labels"]).sum())
                total += len(batch["labels"])
        trainer.model.train()
        print(f"epoch {epoch} eval acc {correct / total:.3f}")


class Trainer:
    def __init__(self, model, train_batches, callbacks, epochs=4, lr=3e-4):
        self.model, self.train_batches, self.callbacks = model, train_batches, callbacks
        self.epochs = epochs
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr)

    def training_step(self, batch):
        out = self.model(**batch)
        out.loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        return out.loss.detach()

    def train(self):
        self.model.train()
        for epoch in range(self.epochs):
            for step, batch in enumerate(self.train_batches):
                self.training_step(batch)
                for cb in self.callbacks:
                    cb.on_step_end(self, step)
            for cb in self.callbacks:
                cb.on_epoch_end(self, epoch)


def make_batches(n, batch_size, seq=32):
    ids = torch.randint(0, 2000, (n, seq))
    labels = torch.randint(0, 5, (n,))
    return [{"input_ids": ids[i : i + batch_size], "labels": labels[i : i + batch_size]}
            for i in range(0, n, batch_size)]


if __name__ == "__main__":
    torch.manual_seed(0)
    train = make_batches(640, 32)
    evaluation = make_batches(1536, 128)
    Trainer(TinyBertForSequenceClassification(), train, [EvalCallback(evaluation)]).train()
