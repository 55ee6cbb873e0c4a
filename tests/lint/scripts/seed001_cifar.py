# The CIFAR-10 training code of seed 001 (profiling post), as written there.
import numpy as np
import torch
import torch.nn.functional as F
import torchvision
from tqdm import tqdm


class Dataset(torch.utils.data.Dataset):
    def __init__(self, train=True):
        trainset = torchvision.datasets.CIFAR10(root="./data", train=train, download=True)
        self.imgs, self.labels = np.array([np.array(i[0]) for i in trainset]), np.array([i[1] for i in trainset])

    def __len__(self):
        return len(self.imgs)

    def __getitem__(self, ix):
        img = self.imgs[ix]
        return torch.from_numpy(img / 255.).permute(2, 0, 1).float(), torch.tensor(self.labels[ix]).long()


ds = {"train": Dataset(), "test": Dataset(train=False)}
batch_size = 32
dl = {
    "train": torch.utils.data.DataLoader(ds["train"], batch_size=batch_size, shuffle=True),
    "test": torch.utils.data.DataLoader(ds["test"], batch_size=batch_size, shuffle=False),
}


def step(model, batch, device):
    x, y = batch
    x, y = x.to(device), y.to(device)
    y_hat = model(x)
    loss = F.cross_entropy(y_hat, y)
    acc = (torch.argmax(y_hat, axis=1) == y).sum().item() / y.size(0)
    return loss, acc


def train(model, dl, optimizer, epochs=10, device="cpu", prof=None, end=0):
    model.to(device)
    hist = {"loss": [], "acc": [], "test_loss": [], "test_acc": []}
    for e in range(1, epochs + 1):
        model.train()
        l, a = [], []
        bar = tqdm(dl["train"])
        for batch_idx, batch in enumerate(bar):
            optimizer.zero_grad()
            loss, acc = step(model, batch, device)
            loss.backward()
            optimizer.step()
            l.append(loss.item())
            a.append(acc)
        model.eval()
        l, a = [], []
        bar = tqdm(dl["test"])
        with torch.no_grad():
            for batch in bar:
                loss, acc = step(model, batch, device)
                l.append(loss.item())
                a.append(acc)
        hist["test_loss"].append(np.mean(l))
    return hist
