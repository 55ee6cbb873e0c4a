"""NaN/inf policy (stop / skip / continue) and DataLoader worker death, through the real Trainer."""

from __future__ import annotations

import os
import signal
import warnings

import pytest
import torch
from torch import nn
from torch.utils.data import TensorDataset, get_worker_info

from torchdoctor.errors import TorchdoctorError, UsageError
from torchdoctor.trainer import Trainer, TrainerConfig
from torchdoctor.trainer.faults import (
    NonFiniteGuard,
    NonFiniteLossError,
    NonFiniteLossWarning,
    describe_worker_death,
)

N, BATCH = 32, 4  # 8 steps per epoch


class NanOnCall:
    """A loss that is NaN on its `bad`-th call (0-based), like one poisoned batch."""

    def __init__(self, bad: int):
        self.bad, self.calls = bad, 0

    def __call__(self, outputs, targets):
        loss = nn.functional.cross_entropy(outputs, targets)
        self.calls += 1
        return loss * float("nan") if self.calls - 1 == self.bad else loss


def fit(policy: str, bad_call: int, accumulate: int = 1):
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(N, 5), torch.randint(0, 3, (N,)))
    model = nn.Linear(5, 3)
    config = TrainerConfig(
        device="cpu",
        batch_size=BATCH,
        workers=0,
        quiet=True,
        nan_policy=policy,
        accumulate=accumulate,
    )
    trainer = Trainer(model, lambda p: torch.optim.SGD(p, lr=0.1), NanOnCall(bad_call), config)
    steps_taken = []
    trainer.optimizer.register_step_post_hook(lambda *args: steps_taken.append(1))
    return trainer, data, steps_taken


def test_stop_names_the_step_and_batch():
    trainer, data, _ = fit("stop", bad_call=5)
    with pytest.raises(NonFiniteLossError, match=r"loss is nan at epoch 1, step 6, batch index 5;"):
        trainer.fit(data)


def test_stop_with_accumulation_names_the_micro_batch():
    trainer, data, _ = fit("stop", bad_call=5, accumulate=2)
    with pytest.raises(NonFiniteLossError, match=r"epoch 1, step 3, batch index 5;"):
        trainer.fit(data)


def test_skip_drops_only_that_optimizer_step():
    trainer, data, steps_taken = fit("skip", bad_call=2)
    with pytest.warns(NonFiniteLossWarning, match="step 3, batch index 2; skipping"):
        history = trainer.fit(data)
    assert len(steps_taken) == N // BATCH - 1
    assert history[0].steps == N // BATCH
    assert all(torch.isfinite(p).all() for p in trainer.model.parameters())
    assert trainer.guard.events[0].batch == 2
    assert history[0].train_loss == history[0].train_loss  # the skipped batch is not in the mean


def test_continue_warns_and_keeps_stepping():
    trainer, data, steps_taken = fit("continue", bad_call=N // BATCH - 1)  # the last batch
    with pytest.warns(NonFiniteLossWarning, match="continuing"):
        trainer.fit(data)
    assert len(steps_taken) == N // BATCH
    assert not torch.isfinite(trainer.model.weight).all()  # it did apply the NaN step


def test_guard_unit_behaviour_and_bad_policy():
    with pytest.raises(UsageError, match="nan policy must be one of"):
        NonFiniteGuard("ignore")
    guard = NonFiniteGuard("stop")
    guard.observe(torch.tensor(1.0), epoch=0, step=0, batch=0)
    assert guard.step_ok()
    guard.observe(torch.tensor(float("inf")), epoch=0, step=1, batch=1)
    assert guard.step_ok()  # "stop" reads the flag one step late: no stall on the GPU queue
    with pytest.raises(NonFiniteLossError, match="loss is inf at epoch 1, step 2, batch index 1"):
        guard.flush()
    skip = NonFiniteGuard("skip")
    skip.observe(torch.tensor(float("nan")), epoch=2, step=9, batch=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert not skip.step_ok()


class SuicidalWorkerData(TensorDataset):
    def __getitem__(self, index):
        if get_worker_info() is not None and index >= 0:
            os.kill(os.getpid(), signal.SIGKILL)  # what the kernel OOM killer does
        return super().__getitem__(index)


def test_dead_dataloader_worker_is_one_clear_line():
    data = SuicidalWorkerData(torch.randn(16, 5), torch.randint(0, 3, (16,)))
    config = TrainerConfig(
        device="cpu", batch_size=4, workers=1, persistent_workers=False, quiet=True
    )
    trainer = Trainer(
        nn.Linear(5, 3), lambda p: torch.optim.SGD(p, lr=0.1), nn.CrossEntropyLoss(), config
    )
    with pytest.raises(
        TorchdoctorError, match=r"a DataLoader worker \(pid \d+\) was killed \(signal 9"
    ) as caught:
        trainer.fit(data)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "message, expected",
    [
        (
            "DataLoader worker (pid 123) is killed by signal: Killed. ",
            "pid 123) was killed (signal 9",
        ),
        (
            "DataLoader worker (pid(s) 12, 13) exited unexpectedly",
            "pid 12, 13) exited unexpectedly",
        ),
        (
            "DataLoader worker (pid 7) is killed by signal: Segmentation fault. ",
            "killed by signal Segmentation fault",
        ),
        ("CUDA out of memory", None),
    ],
)
def test_worker_death_messages(message, expected):
    described = describe_worker_death(RuntimeError(message))
    assert (described is None) if expected is None else (expected in described)


def test_worker_death_seen_by_the_loaders_timeout_check_names_the_signal():
    # On a busy machine PyTorch's timeout check can find the dead worker before its SIGCHLD
    # handler runs; its message then says only "exited unexpectedly", and the signal is in the
    # exit code of the dead worker it holds (a local of the frame that raised).
    class DeadWorker:
        pid, exitcode = 4242, -signal.SIGKILL

    def try_get_data():
        failed_workers = [DeadWorker()]
        pids = ", ".join(str(w.pid) for w in failed_workers)
        raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly")

    with pytest.raises(RuntimeError) as caught:
        try_get_data()
    assert describe_worker_death(caught.value) == (
        "a DataLoader worker (pid 4242) was killed (signal 9, most often the out-of-memory "
        "killer); lower --workers, --prefetch-factor or the batch size, or free host memory"
    )


def test_stop_and_continue_run_no_op_per_step_and_trainer_fetches_tensors_whole():
    # The Trainer's own diagnosis (test_trainer_diagnosis, a timing test) flaked on its own code:
    # the guard's six small ops every step were 10-18% of a small step (D801 on faults.py), and
    # its loader indexed a TensorDataset one sample at a time (D108, 25-41% of the step).
    from torch.overrides import TorchFunctionMode

    class CountOps(TorchFunctionMode):
        calls = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            CountOps.calls += 1
            return func(*args, **(kwargs or {}))

    guard = NonFiniteGuard("stop")
    losses = [torch.tensor(float(step)) for step in range(10)]
    with CountOps():
        for step, loss in enumerate(losses):
            guard.observe(loss, epoch=0, step=step, batch=step)
            assert guard.step_ok()
    assert CountOps.calls == len(losses)  # observe()'s detach, nothing else
    guard.observe(torch.tensor(float("inf")), epoch=0, step=10, batch=10)
    with pytest.raises(NonFiniteLossError, match="step 11, batch index 10"):
        guard.flush()
    from torchdoctor.trainer.data import build_loader
    from torchdoctor.trainer.setup import resolve_setup

    data = TensorDataset(torch.arange(10.0), torch.arange(10.0))
    handle = build_loader(
        data,
        resolve_setup(TrainerConfig(), nn.Linear(1, 1)),
        4,
        shuffle=True,
        drop_last=False,
        seed=0,
    )
    batches = [x.tolist() for x, _ in handle.epoch_batches(0)]
    assert handle.loader.batch_size is None and len(handle) == len(batches) == 3
    assert sorted(sum(batches, [])) == list(range(10)) and [len(b) for b in batches] == [4, 4, 2]
