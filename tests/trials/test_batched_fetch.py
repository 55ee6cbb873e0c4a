"""`--try batched_fetch` (rule D108's fix): the same batches in the same order from one indexing
call per batch, only where the dataset returns that batch for a list of indices."""

from pathlib import Path

import torch
from torch.utils.data import BatchSampler, DataLoader, Dataset, SequentialSampler, TensorDataset

from torchdoctor.intercept.hooks import Hooks
from torchdoctor.trials.api import run_trials
from torchdoctor.trials.fixes import fixes_for_findings, get_fix

SCRIPT = (
    Path(__file__).parents[1] / "diagnose" / "rules" / "scripts" / "d108_tensordataset_fetch.py"
)


class PerSample(Dataset):
    """Indexes one sample at a time only: a list of indices is an error."""

    def __init__(self, n=10):
        self.x = list(range(n))

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return torch.tensor(self.x[i])


class Jittered(TensorDataset):
    """Takes a list of indices, but draws noise from its own generator per call: a whole batch
    is another batch."""

    def __init__(self, *tensors):
        super().__init__(*tensors)
        self.generator = torch.Generator().manual_seed(0)

    def __getitem__(self, i):
        x, y = super().__getitem__(i)
        return x + torch.rand((), generator=self.generator), y


class Rows(Dataset):
    """A program's own in-memory dataset: tensor indexing takes a list of indices as well."""

    def __init__(self, n=30):
        self.x, self.y = torch.randn(n, 3), torch.arange(n)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return {"x": self.x[i], "y": self.y[i]}


def built(**kwargs):
    hooks = Hooks(cpu_count=2)
    get_fix("batched_fetch").apply(hooks)
    hooks.install()
    try:
        return DataLoader(**kwargs), hooks
    finally:
        hooks.uninstall()


def batches(loader, seed):
    torch.manual_seed(seed)
    if loader.generator is not None:  # one generator for both loaders: from the same state
        loader.generator.manual_seed(seed)
    return [b for _ in range(2) for b in loader]  # two epochs: the shuffles draw again


def test_whole_batches_come_in_the_same_order_with_the_same_random_draws():
    data = TensorDataset(torch.arange(50.0).unsqueeze(1), torch.arange(50))
    for settings in (
        {"shuffle": True, "batch_size": 8},
        {"shuffle": True, "batch_size": 8, "drop_last": True},
        {"batch_size": 7, "generator": torch.Generator().manual_seed(3), "shuffle": True},
        {"batch_sampler": BatchSampler(SequentialSampler(range(50)), 9, False)},
    ):
        plain = DataLoader(data, **settings)
        batched, hooks = built(dataset=data, **settings)
        assert "batched_fetch" in hooks.used and batched.batch_size is None
        expected, got = batches(plain, 0), batches(batched, 0)
        assert len(expected) == len(got) == 2 * len(plain), settings
        for a, b in zip(expected, got, strict=True):
            assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True)), settings


def test_a_programs_own_dataset_indexed_by_a_list_is_batched_too():
    data = Rows()
    plain = DataLoader(data, batch_size=4, shuffle=True)
    batched, hooks = built(dataset=data, batch_size=4, shuffle=True)
    assert "batched_fetch" in hooks.used
    for a, b in zip(batches(plain, 1), batches(batched, 1), strict=True):
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_loaders_it_cannot_batch_are_left_as_built():
    data = TensorDataset(torch.randn(20, 2))
    for kwargs in (
        {"dataset": PerSample(), "batch_size": 4},  # no list indexing
        {"dataset": Jittered(torch.randn(20, 2), torch.arange(20)), "batch_size": 4},
        {"dataset": data, "batch_size": 4, "collate_fn": lambda samples: samples},
        {"dataset": data, "batch_size": 4, "num_workers": 1},
        {"dataset": data, "batch_size": None},
    ):
        state = torch.get_rng_state()
        own = getattr(kwargs["dataset"], "generator", torch.Generator()).get_state()
        loader, hooks = built(**kwargs)
        assert "batched_fetch" not in hooks.used and loader.batch_size == kwargs["batch_size"]
        # the check drew nothing from the program's streams, nor from the dataset's own
        assert torch.equal(state, torch.get_rng_state())
        assert torch.equal(own, getattr(loader.dataset, "generator", torch.Generator()).get_state())


def test_the_d108_finding_selects_it_and_the_planted_script_keeps_its_losses():
    class Finding:
        def __init__(self, code):
            self.id, self.changes_semantics = code, False

    assert "batched_fetch" in fixes_for_findings([Finding("D108")], None)
    report = run_trials(str(SCRIPT), [], "batched_fetch", steps=4, repeats=1, warmup=1)
    variant = {v.config.name: v for v in report.variants}["batched_fetch"]
    assert variant.config.status == "ok", variant.config  # it acted: not "no effect"
    assert variant.semantics.verdict == "kept", variant.semantics
