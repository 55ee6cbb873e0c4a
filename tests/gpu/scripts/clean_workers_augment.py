"""Clean, with DataLoader worker processes (forked after CUDA is initialized, as most GPU
programs do): per-sample augmentation (random crop and flip) in 4 persistent workers, pinned
batches, bf16 autocast, channels_last, cudnn.benchmark. No GPU rule may fire and no worker may
die. (--fixed: the same.)"""

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

import _planted


class Augmented(Dataset):
    def __init__(self) -> None:
        self.images, self.labels = _planted.images(count=2048, size=36).tensors

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int):
        top, left = torch.randint(0, 5, (2,)).tolist()
        image = self.images[index, :, top : top + 32, left : left + 32]
        if torch.rand(()) < 0.5:
            image = image.flip(-1)
        return image, self.labels[index]


args = _planted.arguments()
torch.backends.cudnn.benchmark = True
model = _planted.convnet().cuda().to(memory_format=torch.channels_last)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
loader = DataLoader(
    Augmented(),
    batch_size=128,
    shuffle=True,
    drop_last=True,
    num_workers=4,
    pin_memory=True,
    persistent_workers=True,
)
for _, x, y in _planted.batches(loader, args.steps):
    x = x.cuda(non_blocking=True).to(memory_format=torch.channels_last)
    y = y.cuda(non_blocking=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
