"""One rank of the distributed tests (run by dist_launch.launch, or alone for the 1-process reference).

usage: dist_worker.py train OUT BATCH STEPS   train a BatchNorm model, rank 0 saves its state to OUT
       dist_worker.py checks OUT BATCH STEPS
           the same without SyncBatchNorm, then (same processes: start-up is most of the cost)
           a NaN loss on rank 1 only under nan_policy "skip" (both ranks must skip), then a
           config check where rank 1 has a different batch size (must fail cleanly on both)
"""

from __future__ import annotations

import sys
import warnings

import torch
from torch import nn

from torchdoctor.errors import TorchdoctorError
from torchdoctor.trainer import distributed
from torchdoctor.trainer.faults import NonFiniteGuard
from torchdoctor.trainer.sampler import ResumableSampler

DATASET = 64


def make_data() -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(DATASET, 6, generator=generator)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
    return x, y


def make_model() -> nn.Module:
    torch.manual_seed(2)
    return nn.Sequential(nn.Linear(6, 12), nn.BatchNorm1d(12), nn.ReLU(), nn.Linear(12, 3))


def train(out: str, batch: int, steps: int, sync_batchnorm: bool = True) -> None:
    env = distributed.detect()
    env = distributed.setup(env, "cpu", timeout_s=60)
    if sync_batchnorm:
        model = distributed.prepare_model(make_model(), env, "cpu")
    else:  # DDP around plain BatchNorm: per-rank statistics (what seed 004 warns about)
        model = torch.nn.parallel.DistributedDataParallel(make_model())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
    x, y = make_data()
    sampler = ResumableSampler(
        DATASET, shuffle=True, seed=5, rank=env.rank, world_size=env.world_size
    )
    step, epoch = 0, 0
    losses = []
    while step < steps:
        sampler.set_epoch(epoch)
        order = list(sampler)
        for start in range(0, len(order) - batch + 1, batch):
            index = torch.tensor(order[start : start + batch])
            loss = nn.functional.cross_entropy(model(x[index]), y[index])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(distributed.all_reduce_mean(loss.item(), env))
            step += 1
            if step == steps:
                break
        epoch += 1
    if env.is_main:
        state = distributed.unwrap(model).state_dict()
        torch.save({"state": state, "losses": losses}, out)
    distributed.barrier(env)


def nan_on_one_rank() -> None:
    env = distributed.setup(distributed.detect(), "cpu", timeout_s=30)
    guard = NonFiniteGuard("skip", env)
    loss = torch.tensor(float("nan") if env.rank == 1 else 0.5)
    guard.observe(loss, epoch=0, step=3, batch=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        proceed = guard.step_ok()
    print(
        f"rank {env.rank}: step_ok={proceed} warning={caught[0].message if caught else None}",
        flush=True,
    )


def disagree() -> None:
    env = distributed.setup(distributed.detect(), "cpu", timeout_s=30)
    config = {"batch_size": 32 if env.rank == 0 else 64, "lr": 0.1}
    try:
        distributed.check_agreement(config, env, "the trainer config")
    except TorchdoctorError as error:
        print(f"rank {env.rank}: {error}")
        distributed.teardown(env)
        sys.exit(1)
    distributed.teardown(env)


if __name__ == "__main__":
    train(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sync_batchnorm=sys.argv[1] == "train")
    if sys.argv[1] == "checks":
        nan_on_one_rank()
        disagree()
    distributed.teardown(distributed.detect())
