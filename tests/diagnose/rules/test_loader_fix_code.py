"""Loader fixes are the user's own DataLoader call with only the fix's settings changed.

Each fix is compiled against the call it rewrites: it must parse, keep every argument the user
gave (shuffle, sampler, collate_fn, batch size, ...) and never invent one; the batched-fetch fix
is run and must yield the same batches, in the same order, as the user's loader.
"""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from torchdoctor.diagnose.api import diagnose_script
from torchdoctor.diagnose.observations import LoaderObservation
from torchdoctor.diagnose.rules._data_fixes import batched_fetch_fix
from torchdoctor.diagnose.rules._loader_call import call_keywords, rewrite_call

CALLS = [
    "DataLoader(train_set, batch_size=32, shuffle=False, collate_fn=pad_batch)",
    "DataLoader(ds, 16, True, drop_last=True)",
    "torch.utils.data.DataLoader(\n    dataset=ds,\n    sampler=DistributedSampler(ds),\n"
    "    batch_size=cfg.batch,  # per rank\n    worker_init_fn=seed_worker,\n    **extra,\n)",
    "DataLoader(ds, batch_size=8, generator=g, shuffle=True, pin_memory=True, num_workers=1)",
]
SETTINGS = {"num_workers": "4", "persistent_workers": "True", "prefetch_factor": "2"}


@pytest.mark.parametrize("call", CALLS)
def test_rewritten_call_parses_and_keeps_every_user_argument(call):
    fix = rewrite_call(LoaderObservation(location="t.py:1", call_source=call), SETTINGS)
    compile(fix, "<fix>", "eval")
    before, after = call_keywords(call), call_keywords(fix)
    for name, value in before.items():
        assert after[name] == SETTINGS.get(name, value), (name, fix)
    assert set(after) == set(before) | set(SETTINGS), fix  # nothing invented (no shuffle=True)
    if "**extra" in call:
        assert "**extra" in fix


def test_without_the_source_the_fix_invents_no_setting():
    fix = rewrite_call(LoaderObservation(location="<unknown>", batch_size=64), SETTINGS)
    assert "shuffle" not in fix and "batch_size=64" in fix and "..." in fix


def test_dropping_workers_drops_the_settings_torch_refuses_without_them():
    call = "DataLoader(ds, batch_size=4, num_workers=2, persistent_workers=True, prefetch_factor=4)"
    loader = LoaderObservation(location="t.py:1", call_source=call)
    fix = rewrite_call(loader, {"num_workers": "0"}, drop=("persistent_workers", "prefetch_factor"))
    ds = TensorDataset(torch.arange(8.0))
    eval(compile(fix, "<fix>", "eval"), {"DataLoader": DataLoader, "ds": ds})  # torch accepts it


def _batches(loader) -> list[list[float]]:
    return [batch[0].tolist() for batch in loader]


@pytest.mark.parametrize(
    "call",
    [
        "DataLoader(ds, batch_size=3, shuffle=False)",
        "DataLoader(ds, 3, drop_last=True)",
        "DataLoader(ds, batch_size=3, sampler=SequentialSampler(ds), drop_last=False)",
        "DataLoader(ds, batch_size=4, shuffle=True, generator=g)",
    ],
)
def test_batched_fetch_fix_yields_the_user_loaders_batches(call):
    from torch.utils.data import SequentialSampler

    ds = TensorDataset(torch.arange(10.0))
    names = {"DataLoader": DataLoader, "ds": ds, "SequentialSampler": SequentialSampler}
    names["g"] = torch.Generator().manual_seed(5)
    original = eval(call, names)
    loader = LoaderObservation(
        location="t.py:1",
        call_source=call,
        batch_size=original.batch_size,
        sampler_type=type(original.sampler).__name__,
        drop_last=original.drop_last,
        dataset_type="TensorDataset",
    )
    fix = batched_fetch_fix(loader, drop_workers=True)
    scope = dict(names)
    scope["g"] = torch.Generator().manual_seed(5)
    exec(compile(fix, "<fix>", "exec"), scope)
    names["g"].manual_seed(5)  # the user's loader, from the same generator state
    assert _batches(scope["loader"]) == _batches(eval(call, names)), fix


def test_d101_fix_keeps_the_flagged_loaders_own_settings(tmp_path: Path):
    """Diagnosed for real: a loader that does not shuffle gets a fix that does not shuffle."""
    script = tmp_path / "train.py"
    script.write_text(
        dedent(
            """
            import time
            import torch
            from torch import nn
            from torch.utils.data import DataLoader, Dataset

            class Slow(Dataset):
                def __len__(self):
                    return 512
                def __getitem__(self, i):
                    time.sleep(0.0005)  # decoding a file, say
                    return torch.randn(8), i % 2

            def stack(samples):
                xs, ys = zip(*samples)
                return torch.stack(xs), torch.tensor(ys)

            loader = DataLoader(
                Slow(), 16, shuffle=False,  # keep the order
                collate_fn=stack, drop_last=True,
            )
            model = nn.Linear(8, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in loader:
                optimizer.zero_grad()
                nn.functional.cross_entropy(model(x), y).backward()
                optimizer.step()
            """
        ),
        encoding="utf-8",
    )
    report = diagnose_script(str(script), steps=6, warmup=2)
    d101 = next(f for f in report.findings if f.id == "D101")
    compile(d101.fix, "<fix>", "eval")
    kept = call_keywords(d101.fix)
    assert kept["shuffle"] == "False" and kept["batch_size"] == "16", d101.fix
    assert kept["collate_fn"] == "stack" and kept["drop_last"] == "True", d101.fix
    assert kept["num_workers"] != "0" and "".join(d101.fix.split()).startswith("DataLoader(Slow(),")


def test_comments_inside_an_argument_do_not_swallow_the_call():
    call = (
        "DataLoader(\n    ds,\n    collate_fn=make(  # padding\n        3),\n    shuffle=False,\n)"
    )
    fix = rewrite_call(LoaderObservation(location="t.py:1", call_source=call), SETTINGS)
    compile(fix, "<fix>", "eval")
    kept = call_keywords(fix)
    assert kept["shuffle"] == "False" and kept["collate_fn"].startswith("make("), fix
