"""Sequence packing for a small causal LM: variable-length documents are packed into fixed
rows of 128 tokens by the collate_fn, which also builds each row's block-diagonal causal mask
(a token attends to earlier tokens of its own document only). The author writes the packing and
the mask with Python loops: token by token, then position by position for the mask.

Planted: Python loops over every token (and token pair) of the batch in collate_fn, in the
training process. --fixed: documents concatenated with torch.cat and cut with view; the mask
from the document ids with one broadcast comparison.
"""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv
ROW, VOCAB = 128, 256


class Documents(Dataset):
    def __init__(self, n=3000):
        g = torch.Generator().manual_seed(0)
        self.docs = [torch.randint(1, VOCAB, (int(n_tokens),), generator=g)
                     for n_tokens in torch.randint(20, 200, (n,), generator=g)]

    def __len__(self):
        return len(self.docs)

    def __getitem__(self, i):
        return self.docs[i]


def pack(docs):
    if FIXED:
        flat = torch.cat(docs)
        doc_ids = torch.cat([torch.full((len(d),), k) for k, d in enumerate(docs)])
        rows = len(flat) // ROW
        tokens, doc_ids = flat[: rows * ROW].view(rows, ROW), doc_ids[: rows * ROW].view(rows, ROW)
        causal = torch.ones(ROW, ROW, dtype=torch.bool).tril()
        return tokens, (doc_ids[:, :, None] == doc_ids[:, None, :]) & causal
    rows, row_docs, row, docs_of_row = [], [], [], []
    for k, doc in enumerate(docs):
        for tok in doc.tolist():
            row.append(tok)
            docs_of_row.append(k)
            if len(row) == ROW:
                rows.append(row)
                row_docs.append(docs_of_row)
                row, docs_of_row = [], []
    masks = []
    for ids in row_docs:
        mask = [[ids[i] == ids[j] and j <= i for j in range(ROW)] for i in range(ROW)]
        masks.append(mask)
    return torch.tensor(rows), torch.tensor(masks)


class PackedLM(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.tok, self.pos = nn.Embedding(VOCAB, dim), nn.Embedding(ROW, dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.out = nn.Linear(dim, VOCAB)

    def forward(self, tokens, mask):
        h = self.tok(tokens) + self.pos(torch.arange(tokens.shape[1]))
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        a = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.out(h + self.proj(a))


def main():
    torch.manual_seed(0)
    loader = DataLoader(Documents(), batch_size=16, shuffle=True, collate_fn=pack)
    model = PackedLM()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for tokens, mask in loader:
            logits = model(tokens[:, :-1], mask[:, :-1, :-1])
            loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB),
                                               tokens[:, 1:].reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
