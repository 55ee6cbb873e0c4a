"""A recursive (Tree-RNN) sentence model: each sentence is a binary parse tree, and a node's
vector is `tanh(W [left; right])` of its children's vectors, computed by a recursive Python
function from the leaves (word embeddings) up; the root feeds a classifier. Generated random
binary trees over 32 leaves.

Planted: the tree is evaluated node by node, one sample at a time (`compose(node)` recursing
with 1 x 128 tensors): each step runs ~2000 tiny matrix products in Python. --fixed: the trees
are full and balanced, so the batch is composed level by level: one batched product per level
for the whole batch (5 products per step).
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
LEAVES, DIM = 32, 128


class TreeRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(1000, DIM)
        self.compose = nn.Linear(2 * DIM, DIM)
        self.out = nn.Linear(DIM, 2)

    def node(self, leaves, lo, hi):
        if hi - lo == 1:
            return leaves[lo : lo + 1]
        mid = (lo + hi) // 2
        pair = torch.cat([self.node(leaves, lo, mid), self.node(leaves, mid, hi)], 1)
        return torch.tanh(self.compose(pair))

    def forward(self, words):
        vectors = self.emb(words)
        if FIXED:
            level = vectors
            while level.shape[1] > 1:
                level = torch.tanh(self.compose(level.reshape(len(words), -1, 2 * DIM)))
            return self.out(level[:, 0])
        roots = [self.node(v, 0, LEAVES) for v in vectors]
        return self.out(torch.cat(roots))


if __name__ == "__main__":
    torch.manual_seed(0)
    words = torch.randint(0, 1000, (2048, LEAVES))
    labels = (words[:, 0] % 2)
    model = TreeRNN()
    opt = torch.optim.Adagrad(model.parameters(), lr=0.05)
    for epoch in range(2):
        for start in range(0, len(words), 64):
            loss = nn.functional.cross_entropy(model(words[start : start + 64]),
                                               labels[start : start + 64])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
