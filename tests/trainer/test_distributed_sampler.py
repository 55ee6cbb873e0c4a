"""The data order rule: a pure function of (seed, epoch), partitioned across ranks, resumable."""

from __future__ import annotations

import pytest
import torch
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from torchdoctor.errors import CheckpointError
from torchdoctor.trainer.sampler import ResumableSampler, loader_generator, loader_seed


def test_order_is_a_pure_function_of_seed_and_epoch():
    a, b = ResumableSampler(50, seed=1), ResumableSampler(50, seed=1)
    a.set_epoch(3)
    list(b)  # iterating another epoch first changes nothing
    b.set_epoch(3)
    assert list(a) == list(b)
    assert sorted(a) == list(range(50))
    b.set_epoch(4)
    assert list(a) != list(b)
    assert list(ResumableSampler(50, seed=2)) != list(ResumableSampler(50, seed=1))
    assert list(ResumableSampler(7, shuffle=False)) == list(range(7))


@pytest.mark.parametrize(
    "n, world, drop_last", [(17, 2, False), (17, 3, True), (16, 4, False), (5, 3, False)]
)
def test_same_indices_as_torch_distributed_sampler(n, world, drop_last):
    for rank in range(world):
        ours = ResumableSampler(n, seed=9, rank=rank, world_size=world, drop_last=drop_last)
        theirs = DistributedSampler(
            range(n), num_replicas=world, rank=rank, seed=9, drop_last=drop_last
        )
        ours.set_epoch(2)
        theirs.set_epoch(2)
        assert list(ours) == list(theirs)


def test_ranks_partition_the_epoch_and_match_one_process_at_world_times_batch():
    n, world, batch = 48, 3, 4
    ranks = [ResumableSampler(n, seed=0, rank=r, world_size=world) for r in range(world)]
    single = list(ResumableSampler(n, seed=0))
    orders = [list(s) for s in ranks]
    assert sorted(sum(orders, [])) == list(range(n))  # disjoint and complete
    for step in range(n // (world * batch)):
        per_rank = {i for order in orders for i in order[step * batch : (step + 1) * batch]}
        assert per_rank == set(single[step * world * batch : (step + 1) * world * batch])


def test_padding_gives_every_rank_the_same_number_of_samples():
    ranks = [ResumableSampler(10, seed=0, rank=r, world_size=4) for r in range(4)]
    assert {len(list(s)) for s in ranks} == {3}
    assert set(sum((list(s) for s in ranks), [])) == set(range(10))


def test_skip_resumes_mid_epoch_for_one_pass_only():
    sampler = ResumableSampler(20, seed=4)
    sampler.set_epoch(1)
    full = list(sampler)
    sampler.skip(6)
    assert len(sampler) == 14
    assert list(sampler) == full[6:]
    assert list(sampler) == full  # the next pass starts at the beginning again
    sampler.skip(5)
    sampler.set_epoch(2)  # a new epoch drops a pending skip
    assert len(list(sampler)) == 20


def test_state_dict_round_trip_and_world_size_change():
    two = [ResumableSampler(24, seed=3, rank=r, world_size=2) for r in range(2)]
    for s in two:
        s.set_epoch(5)
    state = two[0].state_dict(position=6)  # 6 samples per rank = 12 global
    single = ResumableSampler(24, seed=3)
    single.load_state_dict(state)
    assert single.epoch == 5 and single.start_position == 12
    full = ResumableSampler(24, seed=3)
    full.set_epoch(5)
    assert list(single) == list(full)[12:]
    three = ResumableSampler(24, seed=3, rank=0, world_size=5)
    with pytest.raises(CheckpointError, match="does not split evenly over 5 ranks"):
        three.load_state_dict(state)
    with pytest.raises(CheckpointError, match="seed=3 but this run has seed=4"):
        ResumableSampler(24, seed=4).load_state_dict(state)


def test_loader_generator_makes_worker_seeds_reproducible_and_rank_specific():
    assert loader_seed(0, 1, 0) == loader_seed(0, 1, 0)
    assert (
        len(
            {loader_seed(0, 1, 0), loader_seed(0, 1, 1), loader_seed(0, 2, 0), loader_seed(1, 1, 0)}
        )
        == 4
    )

    data = TensorDataset(torch.arange(8.0))

    def worker_draws(epoch, rank):
        loader = DataLoader(
            data, batch_size=4, num_workers=0, generator=loader_generator(5, epoch, rank)
        )
        iter(loader)  # creating the iterator draws the workers' base seed from the generator
        return loader.generator.initial_seed(), torch.get_rng_state()

    before = torch.get_rng_state()
    seed_a, state_a = worker_draws(1, 0)
    assert torch.equal(state_a, before)  # the global torch RNG was not touched
    assert worker_draws(1, 0)[0] == seed_a != worker_draws(1, 1)[0]
