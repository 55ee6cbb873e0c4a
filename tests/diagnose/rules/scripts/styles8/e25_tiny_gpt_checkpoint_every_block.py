"""A tiny GPT (pre-norm decoder blocks with causal self-attention written out: qkv projection,
masked softmax, output projection, MLP), trained on a synthetic copy task with random windows of
a token stream; a `get_batch(split)` helper as in nanoGPT and a loss estimate every epoch.

Planted: each block's forward goes through `torch.utils.checkpoint.checkpoint` (a
`grad_checkpointing = True` flag in the model config) on a 6-block model with a batch of 16 x 64
tokens that uses a few MiB: the backward re-runs every block's forward for memory that was never
short. --fixed: `grad_checkpointing = False`.
"""

import math
import sys
from dataclasses import dataclass

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

FIXED = "--fixed" in sys.argv


@dataclass
class GPTConfig:
    vocab: int = 64
    block_size: int = 64
    n_layer: int = 6
    n_embd: int = 64
    n_head: int = 4
    grad_checkpointing: bool = not FIXED


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(cfg.n_embd), nn.LayerNorm(cfg.n_embd)
        self.qkv, self.proj = (
            nn.Linear(cfg.n_embd, 3 * cfg.n_embd),
            nn.Linear(cfg.n_embd, cfg.n_embd),
        )
        self.mlp = nn.Sequential(
            nn.Linear(cfg.n_embd, 4 * cfg.n_embd), nn.GELU(), nn.Linear(4 * cfg.n_embd, cfg.n_embd)
        )
        self.n_head = cfg.n_head
        self.register_buffer("mask", torch.tril(torch.ones(cfg.block_size, cfg.block_size)).bool())

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, 2)
        q, k, v = (z.view(b, t, self.n_head, c // self.n_head).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.shape[-1])
        att = att.masked_fill(~self.mask[:t, :t], float("-inf")).softmax(-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, c))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.tok, self.pos = (
            nn.Embedding(cfg.vocab, cfg.n_embd),
            nn.Embedding(cfg.block_size, cfg.n_embd),
        )
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.head = nn.Linear(cfg.n_embd, cfg.vocab)

    def forward(self, idx, targets):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
        for block in self.blocks:
            x = (
                checkpoint(block, x, use_reentrant=False)
                if self.cfg.grad_checkpointing
                else block(x)
            )
        logits = self.head(x)
        return nn.functional.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


if __name__ == "__main__":
    torch.manual_seed(0)
    cfg = GPTConfig()
    stream = torch.randint(0, cfg.vocab, (40000,))
    stream[1::2] = stream[0::2]
    data = {"train": stream[:36000], "val": stream[36000:]}

    def get_batch(split):
        d = data[split]
        ix = torch.randint(len(d) - cfg.block_size - 1, (16,))
        return torch.stack([d[i : i + cfg.block_size] for i in ix]), torch.stack(
            [d[i + 1 : i + cfg.block_size + 1] for i in ix]
        )

    model = GPT(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for it in range(400):
        loss = model(*get_batch("train"))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if it % 200 == 199:
            model.eval()
            with torch.no_grad():
                print(it, "val", sum(model(*get_batch("val")).item() for _ in range(5)) / 5)
            model.train()
