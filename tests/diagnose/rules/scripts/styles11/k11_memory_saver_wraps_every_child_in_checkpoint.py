"""A seq2seq-free Transformer encoder classifier on generated token sequences, with a
`memory_saver(model)` helper that walks the model and replaces every block by a wrapper module
that runs it through `torch.utils.checkpoint.checkpoint` (a pattern from a large-model codebase).

Planted: the helper is applied unconditionally on this small model (4 layers, batch 32, a few
MB of activations against many GB free): every block's forward is recomputed in backward for no
memory need. --fixed: the helper is not applied.
"""

import sys

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

FIXED = "--fixed" in sys.argv


class Checkpointed(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, *args):
        return checkpoint(self.inner, *args, use_reentrant=False)


def memory_saver(module):
    for name, child in module.named_children():
        if isinstance(child, nn.TransformerEncoderLayer):
            setattr(module, name, Checkpointed(child))
        else:
            memory_saver(child)
    return module


class Classifier(nn.Module):
    def __init__(self, vocab=1000, dim=128):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(nn.TransformerEncoderLayer(dim, 4, 256, batch_first=True,
                                                               dropout=0.0) for _ in range(4))
        self.head = nn.Linear(dim, 3)

    def forward(self, tokens):
        h = self.emb(tokens)
        for layer in self.layers:
            h = layer(h)
        return self.head(h.mean(1))


if __name__ == "__main__":
    torch.manual_seed(0)
    tokens = torch.randint(0, 1000, (4000, 64))
    labels = tokens[:, :4].sum(1) % 3
    model = Classifier()
    if not FIXED:
        memory_saver(model)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for step in range(200):
        idx = torch.randint(0, len(tokens), (32,))
        loss = nn.functional.cross_entropy(model(tokens[idx]), labels[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 50 == 0:
            print(step, float(loss))
