"""CLEAN: an IterableDataset streaming pre-tensorised shards (.npy files written to a temp dir,
memory-mapped), each worker taking its own shards, batches of 256 yielded whole by the dataset
(batch_size=None), two persistent workers. Nothing is planted (`--fixed` changes nothing).
"""

import os
import tempfile

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, IterableDataset, get_worker_info


class Shards(IterableDataset):
    def __init__(self, paths, batch=256):
        self.paths, self.batch = paths, batch

    def __iter__(self):
        info = get_worker_info()
        mine = self.paths if info is None else self.paths[info.id::info.num_workers]
        for path in mine:
            arr = np.load(path, mmap_mode="r")
            for start in range(0, len(arr), self.batch):
                block = torch.from_numpy(np.ascontiguousarray(arr[start:start + self.batch]))
                yield block[:, :-1], block[:, -1].long()


def main(tmp):
    rng = np.random.default_rng(0)
    paths = []
    for shard in range(8):
        data = rng.normal(size=(2048, 33)).astype(np.float32)
        data[:, -1] = data[:, 0] > 0
        paths.append(os.path.join(tmp, f"shard{shard}.npy"))
        np.save(paths[-1], data)
    torch.manual_seed(0)
    loader = DataLoader(Shards(paths), batch_size=None, num_workers=2, persistent_workers=True)
    model = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        main(tmp)
