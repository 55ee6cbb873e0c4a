"""What the demo trains: the data (in both of its forms) and a fresh model per row.

Every row starts from the same initial weights (the model is rebuilt under the same seed) and
sees the same samples, so rows differ only by the technique they add.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import torch
from torch import nn

from torchdoctor.data.arrays import ImageArrayDataset
from torchdoctor.demo import naive_loop

RECIPES = ("shapes", "cifar-resnet")


@dataclass(frozen=True)
class Size:
    epochs: int
    n_train: int  # shapes: per class; cifar-resnet: in total
    n_val: int
    width: int = 32  # cifar-resnet's ResNet-18 width


SIZES = {
    ("shapes", False): Size(epochs=4, n_train=2000, n_val=100),
    ("shapes", True): Size(epochs=1, n_train=40, n_val=10),
    ("cifar-resnet", False): Size(epochs=3, n_train=3200, n_val=400, width=16),
    ("cifar-resnet", True): Size(epochs=1, n_train=160, n_val=64, width=8),
}


@dataclass
class Workload:
    recipe: str
    size: Size
    naive_data: dict  # {"train", "test"}: seed 001's Dataset (per-item float64 conversion)
    data_dir: Path | None  # shapes: the image folder the naive script reads
    seed: int

    @property
    def n_train(self) -> int:
        return len(self.naive_data["train"])

    def datasets(self, form: str):
        """(train, val) in the requested form: "per_item" (seed 001) or "vectorised"."""
        if form == "per_item":
            return self.naive_data["train"], self.naive_data["test"]
        return self._vectorised

    @cached_property
    def _vectorised(self):
        # Converted once: the rows share the float32 tensors (they are only read).
        train, test = self.naive_data["train"], self.naive_data["test"]
        return (
            ImageArrayDataset(train.imgs, train.labels, train.classes),
            ImageArrayDataset(test.imgs, test.labels, test.classes),
        )

    def new_model(self) -> nn.Module:
        torch.manual_seed(self.seed)
        return naive_loop.build_model(self.recipe, self.naive_data, self.size.width)

    def optimizer_factory(
        self, fused: bool = False, device_type: str = "cpu", lr_scale: float = 1.0
    ) -> Callable:
        """The naive script's optimizer; `fused`: the same update with the multi-tensor step;
        `lr_scale`: its learning rate multiplied (the large-batch row's linear scaling rule)."""
        kind = torch.optim.AdamW if self.recipe == "shapes" else torch.optim.Adam
        lr = (naive_loop.SHAPES_LR if self.recipe == "shapes" else 1e-3) * lr_scale
        extra = fused_kwargs(device_type) if fused else {}
        return lambda params: kind(params, lr=lr, **extra)

    def naive_script_args(self, epochs: int = 1) -> list[str]:
        """Arguments for `python -m torchdoctor.demo.naive_loop` on this same data."""
        args = ["--recipe", self.recipe, "--epochs", str(epochs), "--seed", str(self.seed)]
        if self.data_dir is not None:
            return args + ["--data", str(self.data_dir)]
        return args + [
            "--n-train",
            str(self.size.n_train),
            "--n-val",
            str(self.size.n_val),
            "--width",
            str(self.size.width),
        ]


def fused_kwargs(device_type: str) -> dict:
    """fused=True: CUDA always; CPU from torch 2.4 on (before that, foreach is the fast path)."""
    major, minor = (int(part) for part in torch.__version__.split(".")[:2])
    if device_type == "cuda" or (major, minor) >= (2, 4):
        return {"fused": True}
    return {"foreach": True}


def prepare(recipe: str, quick: bool, seed: int = 0, cache_dir=None) -> Workload:
    size = SIZES[(recipe, quick)]
    if recipe == "shapes":
        from torchdoctor.data.shapes import shapes_dataset

        root = shapes_dataset(
            n_train=size.n_train, n_val=size.n_val, seed=seed, cache_dir=cache_dir
        )
        return Workload(recipe, size, naive_loop.shapes_datasets(root), root, seed)
    data = naive_loop.cifar_datasets(size.n_train, size.n_val, seed=seed)
    return Workload(recipe, size, data, None, seed)
