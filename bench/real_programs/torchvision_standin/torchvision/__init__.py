"""A data stand-in for the parts of torchvision that public training scripts use.

torchvision cannot be installed on the machines that run the real-programs corpus, and nothing
may be downloaded, so this package (put on PYTHONPATH by run.py for the rows that need it, never
by torchdoctor) serves generated images in the shapes and types of MNIST / CIFAR10 / FakeData,
and the common transforms, ResNet builders with random weights, and the names torchmetrics imports.
It is not torchvision: only enough for the scripts to run unmodified.
"""

from . import datasets, models, transforms, utils

__version__ = "0.0-standin"
__all__ = ["datasets", "models", "transforms", "utils"]
