"""A multimodal dataset assembled with `torch.utils.data.StackDataset`: named in-memory
tensor datasets (`image`, `text`, `label`) zipped into dict samples, as a recipe for
image-text pairs does; default collate builds dict batches. A two-tower classifier on
generated features.

Planted: the DataLoader over these in-memory tensors has `num_workers=2,
persistent_workers=True`: every batch is indexed in a worker and its tensors are handed to
the training process through shared memory, which costs more than indexing them in place.
--fixed: no workers: a `BatchSampler` draws each batch's indices and every field is indexed
once per batch in the training process.
"""

import sys

import torch
from torch import nn
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, StackDataset, TensorDataset

FIXED = "--fixed" in sys.argv


class TwoTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.img = nn.Sequential(nn.Linear(512, 128), nn.ReLU())
        self.txt = nn.Sequential(nn.Linear(256, 128), nn.ReLU())
        self.head = nn.Linear(256, 10)

    def forward(self, batch):
        return self.head(torch.cat([self.img(batch["image"]), self.txt(batch["text"])], 1))


if __name__ == "__main__":
    torch.manual_seed(0)
    n = 16384
    labels = torch.randint(0, 10, (n,))
    dataset = StackDataset(image=TensorDataset(torch.randn(n, 512)),
                           text=TensorDataset(torch.randn(n, 256)),
                           label=TensorDataset(labels))
    if FIXED:
        sampler = BatchSampler(RandomSampler(dataset), 256, drop_last=False)
        fields = {"image": dataset.datasets["image"].tensors[0],
                  "text": dataset.datasets["text"].tensors[0], "label": labels}
        batches = lambda: ({k: v[idx] for k, v in fields.items()} for idx in sampler)  # noqa: E731
    else:
        loader = DataLoader(dataset, batch_size=256, shuffle=True, num_workers=2,
                            persistent_workers=True)
        batches = lambda: ({k: v[0] for k, v in b.items()} for b in loader)  # noqa: E731
    model = TwoTower()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        for batch in batches():
            loss = nn.functional.cross_entropy(model(batch), batch["label"])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
