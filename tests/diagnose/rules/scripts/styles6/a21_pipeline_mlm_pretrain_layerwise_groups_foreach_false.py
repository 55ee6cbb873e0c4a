"""A two-stage pipeline: `stage_pretrain` trains a small Transformer encoder with masked-token
prediction on synthetic "sentences", then `stage_classify` fine-tunes it for classification.
Both stages build their optimizer with layer-wise learning-rate decay (one param group per
tensor, the lr shrinking with depth), through one `build_optimizer(cfg)` helper.

Planted: the helper passes `foreach=False` (copied from a config tuned for a memory-tight GPU),
which on a CPU is also the default: AdamW walks its 40-odd tensors one by one, the 2M-entry
embedding among them, on short sequences. --fixed: `fused=True`.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
VOCAB, DIM, LEN = 32000, 64, 16
CFG = {"lr": 1e-3, "decay": 0.85, "weight_decay": 0.01, "foreach": None if FIXED else False,
       "fused": FIXED or None}


def build_optimizer(model, cfg):
    names = [n for n, _ in model.named_parameters()]
    groups = []
    for depth, (name, p) in enumerate(model.named_parameters()):
        scale = cfg["decay"] ** (len(names) - 1 - depth)
        wd = 0.0 if p.ndim == 1 else cfg["weight_decay"]
        groups.append({"params": [p], "lr": cfg["lr"] * scale, "weight_decay": wd})
    return torch.optim.AdamW(groups, lr=cfg["lr"], foreach=cfg["foreach"], fused=cfg["fused"])


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, DIM)
        self.pos = nn.Parameter(torch.zeros(LEN, DIM))
        layer = nn.TransformerEncoderLayer(DIM, 4, 128, dropout=0.1, batch_first=True)
        self.body = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.lm = nn.Linear(DIM, VOCAB)

    def forward(self, tokens):
        return self.body(self.emb(tokens) + self.pos)


def stage_pretrain(model, corpus, steps):
    opt = build_optimizer(model, CFG)
    for step in range(steps):
        batch = corpus[torch.randint(0, len(corpus), (32,))]
        mask = torch.rand(batch.shape) < 0.15
        inputs = batch.masked_fill(mask, 1)
        logits = model.lm(model(inputs)[mask])  # the masked positions only
        loss = nn.functional.cross_entropy(logits, batch[mask])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 50 == 0:
            print("mlm", step, loss.item())


def stage_classify(model, corpus, labels, steps):
    head = nn.Linear(DIM, 2)
    model.add_module("cls_head", head)
    opt = build_optimizer(model, CFG)
    for step in range(steps):
        idx = torch.randint(0, len(corpus), (32,))
        loss = nn.functional.cross_entropy(head(model(corpus[idx]).mean(1)), labels[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("cls", loss.item())


def main():
    torch.manual_seed(0)
    corpus = torch.randint(2, VOCAB, (4096, LEN))
    corpus[:, 1::2] = (corpus[:, ::2] * 3) % VOCAB
    labels = (corpus[:, 0] % 2).long()
    model = Encoder()
    stage_pretrain(model, corpus, 300)
    stage_classify(model, corpus, labels, 100)


if __name__ == "__main__":
    main()
