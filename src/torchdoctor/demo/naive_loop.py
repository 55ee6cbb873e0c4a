"""Seed 001's training loop, as its author wrote it, on locally generated data.

    python -m torchdoctor.demo.naive_loop [--recipe shapes|cifar-resnet] [--epochs N] [--data DIR]

Kept deliberately as in the seed (it is the "before" of `torchdoctor demo`, and what
`torchdoctor diagnose` is shown on): the Dataset holds uint8 numpy images and converts every item
in float64 (`img / 255.`) then to float32; labels become one small tensor each; batch 32; no
DataLoader workers; `zero_grad()` with its default; a `.item()` host sync every step; evaluation
under `no_grad`. Only tqdm is gone (the demo measures time itself) and the data is generated.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import torch
import torch.nn.functional as F

SHAPES_LR = 1e-3  # seed 000: AdamW(lr=1e-3); seed 001: Adam(lr=1e-3)


class Dataset(torch.utils.data.Dataset):
    def __init__(self, imgs, labels, classes):
        self.classes = classes
        self.imgs, self.labels = imgs, labels

    def __len__(self):
        return len(self.imgs)

    def __getitem__(self, ix):
        img = self.imgs[ix]
        return torch.from_numpy(img / 255.0).permute(2, 0, 1).float(), torch.tensor(
            self.labels[ix]
        ).long()


def step(model, batch, device):
    x, y = batch
    x, y = x.to(device), y.to(device)
    y_hat = model(x)
    loss = F.cross_entropy(y_hat, y)
    acc = (torch.argmax(y_hat, axis=1) == y).sum().item() / y.size(0)
    return loss, acc


def train(model, dl, optimizer, epochs=10, device="cpu", log=print):
    model.to(device)
    hist = {"loss": [], "acc": [], "test_loss": [], "test_acc": []}
    for e in range(1, epochs + 1):
        # train
        model.train()
        l, a = [], []
        for batch_idx, batch in enumerate(dl["train"]):
            optimizer.zero_grad()
            loss, acc = step(model, batch, device)
            loss.backward()
            optimizer.step()
            l.append(loss.item())
            a.append(acc)
        hist["loss"].append(np.mean(l))
        hist["acc"].append(np.mean(a))
        # eval
        model.eval()
        l, a = [], []
        with torch.no_grad():
            for batch in dl["test"]:
                loss, acc = step(model, batch, device)
                l.append(loss.item())
                a.append(acc)
        hist["test_loss"].append(np.mean(l))
        hist["test_acc"].append(np.mean(a))
        # log
        log_line = f"Epoch {e}/{epochs}"
        for k, v in hist.items():
            log_line += f" {k} {v[-1]:.4f}"
        if log:
            log(log_line)
    return hist


# ---------------------------------------------------------------- data and model, per recipe
def shapes_datasets(data_dir=None, image_size=64):
    """The shapes image folder (generated if no directory is given) as seed-001-style Datasets."""
    from pathlib import Path

    from torchdoctor.data.image_folder import ImageFolder, load_arrays
    from torchdoctor.data.shapes import shapes_dataset

    root = Path(data_dir) if data_dir else shapes_dataset(image_size=image_size)
    ds = {}
    for split, folder in (("train", "train"), ("test", "val")):
        images = ImageFolder(root / folder, size=image_size)
        ds[split] = Dataset(*load_arrays(images), tuple(images.classes))
    return ds


def cifar_datasets(n_train=2000, n_val=500, seed=0):
    from torchdoctor.data.cifar_like import CLASSES, cifar_like

    return {
        "train": Dataset(*cifar_like(n_train, seed=seed), CLASSES),
        "test": Dataset(*cifar_like(n_val, seed=seed + 1), CLASSES),
    }


def build_model(recipe, ds, width=32):
    if recipe == "shapes":
        from torchdoctor.models.mlp import image_mlp

        side = ds["train"].imgs.shape[1]
        return image_mlp(len(ds["train"].classes), image_size=side)
    from torchdoctor.models.resnet import resnet18

    return resnet18(num_classes=len(ds["train"].classes), width=width)


def build_optimizer(recipe, model):
    if recipe == "shapes":
        return torch.optim.AdamW(model.parameters(), lr=SHAPES_LR)
    return torch.optim.Adam(model.parameters(), lr=1e-3)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m torchdoctor.demo.naive_loop", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--recipe", choices=("shapes", "cifar-resnet"), default="shapes")
    parser.add_argument(
        "--data", help="shapes: image folder with train/ and val/ (default: generate)"
    )
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--n-train", type=int, default=2000, help="cifar-resnet: training images")
    parser.add_argument("--n-val", type=int, default=500, help="cifar-resnet: test images")
    parser.add_argument("--width", type=int, default=32, help="cifar-resnet: ResNet-18 width")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    if args.recipe == "shapes":
        ds = shapes_datasets(args.data)
    else:
        ds = cifar_datasets(args.n_train, args.n_val, seed=args.seed)
    batch_size = args.batch_size
    dl = {
        "train": torch.utils.data.DataLoader(ds["train"], batch_size=batch_size, shuffle=True),
        "test": torch.utils.data.DataLoader(ds["test"], batch_size=batch_size, shuffle=False),
    }
    model = build_model(args.recipe, ds, args.width)
    optimizer = build_optimizer(args.recipe, model)
    train(model, dl, optimizer, epochs=args.epochs, device=args.device)
    return 0


if __name__ == "__main__":
    sys.exit(main())
