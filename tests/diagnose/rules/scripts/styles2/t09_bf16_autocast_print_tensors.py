"""A small transformer-encoder classifier trained under CPU bfloat16 autocast; the author prints
the loss, the batch accuracy and the gradient norm (tensors) and the learning rate every step.

Planted: print(f"... {loss} {acc} {grad_norm} ...") of tensors every step (host reads, tensor
formatting and terminal output in every step). --fixed: printed every 100 steps as floats.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Classifier(nn.Module):
    def __init__(self, vocab=1000, dim=32, classes=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, 2, 64, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 1)
        self.head = nn.Linear(dim, classes)

    def forward(self, tokens):
        return self.head(self.encoder(self.emb(tokens)).mean(1))


def main():
    torch.manual_seed(0)
    tokens = torch.randint(0, 1000, (2048, 16))
    labels = tokens[:, :3].sum(1) % 3
    model = Classifier()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, foreach=True)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=50, gamma=0.9)
    step = 0
    for epoch in range(2):
        for xb, yb in zip(tokens.split(32), labels.split(32)):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                logits = model(xb)
            loss = nn.functional.cross_entropy(logits.float(), yb)
            opt.zero_grad()
            loss.backward()
            grad_norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            step += 1
            acc = (logits.argmax(1) == yb).float().mean()
            if not FIXED:
                print(f"epoch {epoch} step {step} loss {loss} acc {acc} grad norm {grad_norm} "
                      f"lr {sched.get_last_lr()[0]:.2e}")
            elif step % 100 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} acc {acc.item():.3f} "
                      f"grad norm {grad_norm.item():.3f}")


if __name__ == "__main__":
    main()
