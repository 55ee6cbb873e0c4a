"""The first lines of every training script the diagnose tests write (a module of its own, so
test modules import it by a unique name rather than `conftest`, which names several files)."""

# Every script starts single-threaded: on a loaded 2-core machine, OpenMP threads waking up after
# a sleep make step times swing by 100x, which would drown the phases the tests compare.
PRELUDE = """\
import sys, time
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, TensorDataset
torch.set_num_threads(1)
torch.manual_seed(0)
"""
