import pytest
import torch


@pytest.fixture(autouse=True)
def one_torch_thread():
    """Tiny models on a shared 2-core machine: intra-op threads only contend (measured: a
    20x slower test under load), so these tests use one thread and restore the setting."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)
