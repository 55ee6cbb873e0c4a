"""`torchvision.datasets.mnist`, the module some scripts import MNIST from."""

from torchvision.datasets import MNIST

__all__ = ["MNIST"]
