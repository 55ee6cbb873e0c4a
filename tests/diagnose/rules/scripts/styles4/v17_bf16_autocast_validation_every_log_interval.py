"""A small transformer language model trained under CPU bf16 autocast. Validation perplexity is
computed every `log_interval` steps; the config sets log_interval = 1 (meant for the loss print)
and the validation shares it.

Planted: the whole validation set is evaluated after every training step. --fixed: validation
every 100 steps.
"""

import math
import sys
from types import SimpleNamespace

import torch
from torch import nn

cfg = SimpleNamespace(vocab=256, dim=128, heads=4, layers=2, seq=64, batch=16, steps=300,
                      log_interval=1, eval_interval=None)
if "--fixed" in sys.argv:
    cfg.log_interval, cfg.eval_interval = 1, 100


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(cfg.vocab, cfg.dim)
        layer = nn.TransformerEncoderLayer(cfg.dim, cfg.heads, 4 * cfg.dim, batch_first=True)
        self.blocks = nn.TransformerEncoder(layer, cfg.layers, enable_nested_tensor=False)
        self.head = nn.Linear(cfg.dim, cfg.vocab)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(cfg.seq))

    def forward(self, idx):
        return self.head(self.blocks(self.emb(idx), mask=self.mask, is_causal=True))


@torch.no_grad()
def validation_ppl(model, val):
    model.eval()
    losses = []
    for xb, yb in val:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = model(xb)
        losses.append(nn.functional.cross_entropy(logits.float().flatten(0, 1), yb.flatten()))
    model.train()
    return math.exp(torch.stack(losses).mean())


def main():
    torch.manual_seed(0)
    data = torch.randint(0, cfg.vocab, (200_000,))
    val_data = torch.randint(0, cfg.vocab, (8 * cfg.seq * 16 + 1,))
    val = [(val_data[i : i + cfg.seq].view(1, -1).repeat(16, 1),
            val_data[i + 1 : i + 1 + cfg.seq].view(1, -1).repeat(16, 1))
           for i in range(0, 8 * cfg.seq, cfg.seq)]
    model = TinyLM()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    eval_every = cfg.eval_interval or cfg.log_interval
    for step in range(cfg.steps):
        ix = torch.randint(0, len(data) - cfg.seq - 1, (cfg.batch,))
        xb = torch.stack([data[i : i + cfg.seq] for i in ix])
        yb = torch.stack([data[i + 1 : i + 1 + cfg.seq] for i in ix])
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = model(xb)
        loss = nn.functional.cross_entropy(logits.float().flatten(0, 1), yb.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % eval_every == 0:
            ppl = validation_ppl(model, val)
            if step % 50 == 0:
                print(f"step {step} loss {loss.item():.3f} val ppl {ppl:.1f}")


if __name__ == "__main__":
    main()
