"""D1xx data-loading rules as pure functions on hand-built observations."""

from __future__ import annotations

import dataclasses

import pytest
from rule_builders import (
    evidence_text,
    good_cpu_run,
    good_h100_run,
    good_loader,
    make_steps,
    only,
)

from torchdoctor.diagnose.observations import WhatIfTiming
from torchdoctor.diagnose.rules import (
    d101_dataloader_main_process as d101,
)
from torchdoctor.diagnose.rules import (
    d102_too_few_workers as d102,
)
from torchdoctor.diagnose.rules import (
    d103_workers_respawned as d103,
)
from torchdoctor.diagnose.rules import (
    d104_pin_memory_off as d104,
)
from torchdoctor.diagnose.rules import (
    d105_expensive_getitem as d105,
)
from torchdoctor.diagnose.rules import (
    d106_tensor_from_ndarray as d106,
)
from torchdoctor.diagnose.rules import (
    d107_iterator_per_batch as d107,
)
from torchdoctor.diagnose.rules import (
    d108_per_sample_fetch as d108,
)
from torchdoctor.diagnose.rules import (
    d109_workers_over_in_memory_tensors as d109,
)
from torchdoctor.diagnose.rules import (
    d110_workers_at_core_count as d110,
)
from torchdoctor.diagnose.rules import (
    d111_slow_collate as d111,
)
from torchdoctor.diagnose.rules import (
    d112_small_batches_through_workers as d112,
)

HANDOVER_MS = d101.HANDOVER_BATCH_S * 1e3  # a batch of unweighed bytes, received from a worker


def data_bound_run(**loader_changes):
    """A loader doing real per-sample work (not a TensorDataset) in the training process."""
    loader_changes.setdefault("dataset_type", "ImageFiles")
    return good_cpu_run(
        steps=make_steps(data=0.030, forward=0.004, backward=0.005, optimizer=0.001),
        loaders=[good_loader(num_workers=0, persistent_workers=False, **loader_changes)],
    )


def test_d101_fires_on_main_process_loading_with_saving_from_overlap():
    finding = only(d101.check(data_bound_run(item_s=0.0004)), "D101")
    # data 30 ms, rest 10 ms, 7 workers: wait left max(0, 30/7 - 10) = 0 -> saves the 30 of 40 ms
    # less the training process's receiving of each batch (HANDOVER_BATCH_S, bytes not weighed)
    assert finding.saving == pytest.approx((30 - HANDOVER_MS) / 40)
    assert finding.severity == "warning"
    text = evidence_text(finding)
    assert "75%" in text and "30.0 ms" in text and "num_workers=0" in text
    assert f"{HANDOVER_MS * 1e3:.1f} µs a batch to receive it" in finding.saving_how
    assert "train.py:30" in text and "400.0 µs" in text
    assert "num_workers=7" in finding.fix


def test_d101_hand_over_is_weighed_on_the_steps_clock_and_by_the_batchs_bytes():
    """The hand-over constants are CPU time: on a busy machine (the training thread had a CPU
    half the time) the observed phases are twice as long in wall time, and so is receiving a
    batch; a weighed 10 MB batch costs 1.15 ms more to receive."""
    run = data_bound_run(item_s=0.0004)
    for step in run.steps:
        step.cpu_share = 0.5
    saved = only(d101.check(run), "D101").saving
    assert saved == pytest.approx((30 - 2 * HANDOVER_MS) / 40)
    run.loaders[0].collate_bytes = 10_000_000
    heavier = (30 - 2 * (HANDOVER_MS + 1.15)) / 40
    assert only(d101.check(run), "D101").saving == pytest.approx(heavier)


def test_d101_estimates_nothing_without_a_spare_core():
    # one core (a container's limit, a CPU pinned beside other work): "1 worker on 1 core would
    # leave 0 ms of wait" assumed a core the machine does not have
    run = data_bound_run(item_s=0.0004)
    run.environment.cpu_count = run.loaders[0].cpu_count = 1
    assert d101.check(run) == []


def test_d101_saving_is_limited_by_what_workers_can_hide():
    run = data_bound_run()
    run.environment.cpu_count = 2
    run.loaders[0].cpu_count = 2
    finding = only(d101.check(run), "D101")
    # one worker would leave 30 - 10 = 20 ms; one per core (2, as --try starts) 30 / 2 - 10 = 5,
    # but 2 cores hold 30 + 10 ms of work a step (and the hand-over h): (40 + h) / 2 ms, of them
    # (20 - h) / 2 waited, and h received: 20 - h/2 of 40 ms saved
    assert finding.saving == pytest.approx((20 - HANDOVER_MS / 2) / 40)
    assert "num_workers=2" in finding.fix


def test_d101_estimate_counts_only_the_cores_the_trainings_threads_leave_free():
    """The demo on 2 cores: D101 estimated "the wait would drop to about 0 ms" while its own table
    measured 1 worker at 0.84x. With the training's threads on every core the workers compete
    with them: the step cannot be shorter than all the work over the cores."""
    run = data_bound_run()  # 30 ms of data, 10 ms of compute, 8 cores
    run.environment.intra_op_threads = 8
    finding = only(d101.check(run), "D101")
    # 7 workers would hide it all on free cores; the cores' capacity: (30 + 8 * (10 + h)) / 8 =
    # 13.75 + h ms a step, a wait of 3.75 ms left and h received: 26.25 - h of 40 ms saved
    assert finding.saving == pytest.approx((26.25 - HANDOVER_MS) / 40)
    text = evidence_text(finding)
    assert "8 of them busy with the training's 8 intra-op thread(s)" in text
    assert "3.8 ms" in text and "assuming no other load" in text and "load average" not in text
    run.environment.cpu_count = run.loaders[0].cpu_count = 4
    run.environment.intra_op_threads = 4
    run.environment.load_average = 7.5
    finding = only(d101.check(run), "D101")
    # 3 workers on 4 busy cores: (30 + 4 * (10 + h)) / 4 = 17.5 + h ms a step: 22.5 - h saved
    assert finding.saving == pytest.approx((22.5 - HANDOVER_MS) / 40)
    assert finding.saving_basis == "estimated"
    assert "load average was 7.5" in evidence_text(finding)


def test_d101_silent_with_workers_or_little_data_time():
    assert d101.check(good_cpu_run()) == []
    little = good_cpu_run(loaders=[good_loader(num_workers=0)])  # data is 4% of the step
    assert d101.check(little) == []


def test_d102_fires_when_few_workers_starve_the_step():
    run = good_cpu_run(
        steps=make_steps(data=0.020, forward=0.004, backward=0.005, optimizer=0.001),
        loaders=[good_loader(num_workers=1, dataset_type="ImageFiles")],
    )
    finding = only(d102.check(run), "D102")
    # 1 worker, step 30 ms: a batch takes 30 ms to build; 7 workers: 30/7 - 10 < 0 -> no wait
    assert finding.saving == pytest.approx(20 / 30)
    assert "num_workers=1" in evidence_text(finding) and "67%" in evidence_text(finding)


def test_d102_ignores_epoch_start_spikes_and_full_worker_counts():
    run = good_cpu_run()
    run.steps[0].phases["data"] = 0.5  # worker start-up at the epoch start
    run.steps[0].wall_s += 0.5
    run.loaders[0].num_workers = 1
    assert d102.check(run) == []
    starving_at_max = good_cpu_run(
        steps=make_steps(data=0.020, forward=0.01),
        loaders=[good_loader(num_workers=7, dataset_type="ImageFiles")],
    )
    assert d102.check(starving_at_max) == []  # D110's case: no core left for a worker


def respawning_run(startup_s: float):
    loader = good_loader(
        num_workers=4,
        persistent_workers=False,
        dataset_len=256,
        epochs_started=3,
        worker_startup_s=[startup_s] * 3,
        batches=12,
        dataset_type="ImageFiles",
    )
    return good_cpu_run(loaders=[loader])


def test_d103_fires_when_worker_startup_is_a_share_of_each_epoch():
    finding = only(d103.check(respawning_run(0.2)), "D103")
    # an epoch as run: 4 batches x 13.7 ms plus the 0.2 s start-up; all but a steady wait saved
    epoch_s = 4 * 0.0137 + 0.2
    overhead = 0.2 - 0.0005
    assert finding.saving == pytest.approx(overhead / epoch_s, rel=1e-3)
    assert "3 times" in evidence_text(finding) and "200.0 ms" in evidence_text(finding)
    assert "persistent_workers=True" in finding.fix and finding.saving_basis == "estimated"


def test_d103_measured_share_of_the_start_up_replaces_the_estimate():
    run = respawning_run(0.2)
    # the side run: a fresh iterator's first batch 120 ms, a reused persistent one's 30 ms
    run.whatif.timings = [
        WhatIfTiming("data.persistent_workers", "epoch start", 0.120, 0.030, 3,
                     "persistent_workers=True")
    ]  # fmt: skip
    finding = only(d103.check(run), "D103")
    assert finding.saving_basis == "measured" and "0.25x" in finding.saving_how + " ".join(
        finding.evidence
    )
    assert finding.saving == pytest.approx(0.2 * 0.75 / (4 * 0.0137 + 0.2), rel=1e-3)
    # of the fresh iterator's 120 ms, 20 ms was shutting its workers down: 90 ms saved per 100 ms
    # of start-up, and the program's start-ups took 200 ms
    run.whatif.timings[0].startup_s = 0.100
    finding = only(d103.check(run), "D103")
    assert finding.saving == pytest.approx(0.2 * 0.9 / (4 * 0.0137 + 0.2 * 1.2), rel=1e-3)


def test_d103_silent_when_persistent_single_epoch_or_negligible():
    assert d103.check(good_cpu_run()) == []
    persistent = respawning_run(0.2)
    persistent.loaders[0].persistent_workers = True
    assert d103.check(persistent) == []
    long_epochs = respawning_run(0.2)
    long_epochs.loaders[0].dataset_len = 6_400_000
    assert d103.check(long_epochs) == []


def test_d104_fires_on_cuda_with_unpinned_loader():
    run = good_h100_run(
        loaders=[good_loader(pin_memory=False, cpu_count=16)],
        steps=make_steps(h2d=0.004, forward=0.003, backward=0.003),
    )
    finding = only(d104.check(run), "D104")
    assert finding.saving == pytest.approx(0.4 * 0.5)
    assert "40%" in evidence_text(finding) and "pin_memory=False" in evidence_text(finding)


def test_d104_silent_on_cpu_and_when_pinned():
    assert d104.check(good_h100_run()) == []
    assert d104.check(good_cpu_run()) == []  # pin_memory=False is right without a GPU


def test_d105_fires_when_getitem_outweighs_compute():
    run = data_bound_run(item_s=0.0004)  # 64 x 0.4 ms = 25.6 ms per batch vs 10 ms compute
    finding = only(d105.check(run), "D105")
    assert finding.saving == pytest.approx(0.9 * 0.0256 / 0.040)
    assert "25.6 ms" in evidence_text(finding) and "10.0 ms" in evidence_text(finding)


def test_d105_fires_when_getitem_is_the_wait_though_workers_could_hide_it():
    """NumPy rolling features in __getitem__ (m06), PCM records unpacked with `struct` sample by
    sample (p06): the items were the whole data wait, 38% of the step, 0.6x the model's compute.
    Only D101's workers were said; the work itself is the problem."""
    run = good_cpu_run(
        steps=make_steps(data=0.006, forward=0.004, backward=0.005, optimizer=0.001),
        loaders=[
            good_loader(
                num_workers=0, persistent_workers=False, dataset_type="Windows", item_s=0.0001
            )
        ],
    )
    finding = only(d105.check(run), "D105")
    assert finding.saving == pytest.approx(0.9 * 0.006 / 0.016)


def test_d105_silent_when_getitem_is_small_beside_the_model():
    run = good_cpu_run(
        steps=make_steps(data=0.006, forward=0.010, backward=0.010, optimizer=0.001),
        loaders=[
            good_loader(
                num_workers=0, persistent_workers=False, dataset_type="Windows", item_s=0.0001
            )
        ],
    )
    assert d105.check(run) == []  # 6 ms of items beside 21 ms of compute: 0.29x


def test_d105_names_items_where_the_dataset_returns_whole_batches():
    """DLRM's random-data dataset returns a 128-row batch per item to a loader of batch_size=1:
    D105 said "86.1 ms per sample: 86.1 ms per batch of 1"."""
    run = data_bound_run(item_s=0.025, batch_size=1)
    for step in run.steps:
        step.batch_size = 128
    text = evidence_text(only(d105.check(run), "D105"))
    assert "per item: 25.0 ms per batch of 1 item(s) of 128 rows" in text, text
    assert "per sample" not in text


def test_d105_silent_when_getitem_is_cheap_or_unmeasured():
    assert d105.check(data_bound_run(item_s=0.00005)) == []  # 3.2 ms per batch
    assert d105.check(data_bound_run()) == []  # item_s unknown (workers)


def test_d106_fires_on_slow_tensor_creation():
    run = good_cpu_run()
    run.tensor_creation.from_ndarray_list = 1
    run.tensor_creation.seconds_per_step = 0.005
    run.tensor_creation.locations = ["train.py:44"]
    finding = only(d106.check(run), "D106")
    step_s = run.steps[0].wall_s
    assert finding.saving == pytest.approx(0.9 * 0.005 / step_s)
    assert "train.py:44" in evidence_text(finding) and "5.0 ms" in evidence_text(finding)


def test_d106_silent_without_calls_or_when_negligible():
    assert d106.check(good_cpu_run()) == []
    run = good_cpu_run()
    run.tensor_creation.from_ndarray = 1
    run.tensor_creation.seconds_per_step = 0.00001
    assert d106.check(run) == []


@pytest.mark.parametrize("rule", [d101, d102, d103, d104, d105, d106])
def test_data_rules_silent_without_steps(rule):
    assert rule.check(dataclasses.replace(data_bound_run(item_s=0.001), steps=[])) == []


def test_d101_silent_when_samples_are_only_indexed_from_memory():
    run = data_bound_run(item_s=0.00002)  # 20 µs: four trivial ops of 5 µs
    assert d101.check(run) == []


def indexing_run(data_s: float):
    run = good_cpu_run(
        steps=make_steps(data=data_s, forward=0.0003, backward=0.0004, optimizer=0.0001),
        loaders=[
            good_loader(
                num_workers=0, item_s=0.00004, collate_s=0.0005, dataset_type="TensorDataset"
            )
        ],
    )
    run.compute.dispatch_overhead_s = 5e-6  # 40 µs per sample is 8 trivial ops
    return run


def test_d108_suggests_batched_fetching_for_indexing_only_datasets():
    finding = only(d108.check(indexing_run(0.004)), "D108")
    assert finding.saving == pytest.approx(0.8 * 0.004 / 0.0048)
    assert "BatchSampler" in finding.fix and "batch_size=None" in finding.fix
    text = evidence_text(finding)
    assert "TensorDataset" in text and "40.0 µs" in text and "8 trivial ops" in text
    assert d105.check(indexing_run(0.004)) == []  # not "expensive" work: D108's case
    assert d101.check(indexing_run(0.004)) == []  # workers would not help


def test_d108_silent_when_fetching_is_a_small_share_or_items_do_work():
    assert d108.check(indexing_run(0.0002)) == []
    heavy = indexing_run(0.004)
    heavy.loaders[0].item_s = 0.0004  # 80 trivial ops' worth: D105/D101 territory
    heavy.loaders[0].dataset_type = "ImageFiles"
    assert d108.check(heavy) == []
    assert d108.check(good_cpu_run()) == []


def test_d108_silent_on_a_loader_that_already_fetches_whole_batches():
    # D108's own fix (a BatchSampler as the sampler, batch_size=None) still got D108 when its
    # data wait was a large share of a busy machine's step (the Trainer over in-memory tensors,
    # which fetches that way, flaked on it in CI's timing stage)
    batched = indexing_run(0.004)
    batched.loaders[0].batch_size = None
    batched.loaders[0].samples_per_batch = 1.0  # one __getitem__ per batch: no auto-batching
    batched.loaders[0].sampler_type = "BatchSampler"
    batched.loaders[0].collate_s = 0.00001  # default_convert of the batch: no stacking
    assert d108.check(batched) == []


def test_d105_caps_item_time_by_the_steady_data_time():
    run = data_bound_run(item_s=0.0004)
    run.loaders[0].item_s = 0.004  # one very slow fetch inflated the mean
    finding = only(d105.check(run), "D105")
    assert finding.saving == pytest.approx(0.9 * 0.030 / 0.040)


def test_step_profile_leaves_out_a_descheduled_step():
    from torchdoctor.diagnose.rules._common import step_profile

    run = good_cpu_run()
    run.steps[3].phases["data"] += 1.0  # one step lost the CPU for a second
    run.steps[3].wall_s += 1.0
    profile = step_profile(run)
    assert profile.steps == 7 and profile.step_s == pytest.approx(0.0137)
    assert d101.check(dataclasses.replace(run, loaders=[good_loader(num_workers=0)])) == []


def iterator_per_batch_run(num_workers: int = 2):
    loader = good_loader(
        num_workers=num_workers,
        persistent_workers=False,
        epochs_started=8,
        batches=8,
        worker_startup_s=[0.15] * 8,
    )
    return good_cpu_run(
        loaders=[loader], steps=make_steps(data=0.15, forward=0.002, backward=0.003)
    )


def test_d107_flags_next_iter_inside_the_loop():
    finding = only(d107.check(iterator_per_batch_run()), "D107")
    assert finding.saving == pytest.approx(0.15 * (1 - 1 / 100) / 0.155)
    assert "8 times" in evidence_text(finding) and "150.0 ms" in evidence_text(finding)
    assert "yield from loader" in finding.fix
    assert d103.check(iterator_per_batch_run()) == []  # one finding for one problem


def test_d107_silent_for_one_iterator_per_epoch_or_without_workers():
    assert d107.check(iterator_per_batch_run(num_workers=0)) == []
    assert d107.check(respawning_run(0.2)) == []  # 4 batches per iterator: an epoch each
    assert d107.check(good_cpu_run()) == []


def test_tensordataset_gets_d108_not_d101_however_slow_indexing_measured():
    # a busy machine slowed indexing to 80 trivial ops' worth: still in-memory tensors
    run = indexing_run(0.004)
    run.loaders[0].item_s = 0.0004
    assert only(d108.check(run), "D108").saving == pytest.approx(0.8 * 0.004 / 0.0048)
    assert d101.check(run) == [] and d105.check(run) == []


def workers_run(dataset_type: str, num_workers: int, data_s: float = 0.020):
    return good_cpu_run(
        steps=make_steps(data=data_s, forward=0.004, backward=0.005, optimizer=0.001),
        loaders=[good_loader(num_workers=num_workers, dataset_type=dataset_type)],
    )


def test_d109_suggests_dropping_workers_for_in_memory_tensors():
    run = workers_run("TensorDataset", num_workers=2)
    finding = only(d109.check(run), "D109")
    assert finding.saving == pytest.approx(0.8 * 0.020 / 0.030)
    assert finding.severity == "warning"
    assert "num_workers=2" in evidence_text(finding) and "67%" in evidence_text(finding)
    assert "num_workers=0" in finding.fix and "BatchSampler" in finding.fix
    assert d102.check(run) == []  # more workers would only add hand-over cost


def test_d109_when_the_workers_cpu_per_batch_is_a_small_part_of_the_wait():
    # a custom dataset whose __getitem__ ran only in the workers (k29: whole batches by tensor
    # indexing): 2 ms of their CPU per batch, pickling included, against a 20 ms wait
    run = workers_run("InMemoryBatches", num_workers=2)
    run.loaders[0].worker_cpu_s = 0.002
    finding = only(d109.check(run), "D109")
    assert "2.0 ms of CPU time per batch (measured" in evidence_text(finding)
    run.loaders[0].worker_cpu_s = 0.010  # real work per batch: the wait may be the items
    assert d109.check(run) == []
    run.loaders[0].worker_cpu_s = None  # not read: nothing known about the items
    assert d109.check(run) == []


def test_d109_silent_for_small_data_share_or_real_per_sample_work():
    assert d109.check(good_cpu_run()) == []  # TensorDataset with workers, data 4%
    assert d109.check(workers_run("ImageFiles", num_workers=2)) == []
    assert d109.check(data_bound_run()) == []  # no workers: D101/D108's case


def test_d110_says_more_workers_cannot_help_when_every_core_loads():
    run = workers_run("ImageFiles", num_workers=7)  # 8 cores: 7 workers is D102's maximum
    finding = only(d110.check(run), "D110")
    # a batch costs a worker 7 x 30 ms = 210 ms; a tenth of it over 7 workers (3 ms) hides
    # behind 10 ms of compute: the whole 20 ms wait is saved
    assert finding.saving == pytest.approx(0.020 / 0.030)
    text = evidence_text(finding)
    assert "num_workers=7 on 8 CPU core(s)" in text and "cannot help" in text
    assert "augment_batch" in finding.fix and "once" in finding.fix
    assert d102.check(run) == []
    # __getitem__ ran only in the workers (untimed): it may be plain indexing, so say so
    assert "only indexes tensors already in memory" in finding.fix
    assert "num_workers=0" in finding.fix
    run.loaders[0].item_s = 0.002  # measured real work: the indexing hint does not apply
    assert "BatchSampler" not in only(d110.check(run), "D110").fix


def test_d110_needs_the_workers_cpu_time_per_batch_to_outrun_the_step():
    # 20 ms of wait, 10 ms of compute (CPU share 1): 7 workers on 7 spare cores keep pace with
    # up to 70 ms of CPU time per batch; the wait is then load or hand-over, not the items
    run = workers_run("ImageFiles", num_workers=7)
    run.loaders[0].worker_cpu_s = 0.060
    assert d110.check(run) == []
    run.loaders[0].worker_cpu_s = 0.140  # 20 ms per batch per worker core: the items' work
    finding = only(d110.check(run), "D110")
    assert "140.0 ms of CPU time per batch (measured): 20.0 ms per spare core" in evidence_text(
        finding
    )
    one_core = workers_run("ImageFiles", num_workers=1)  # no spare core: built while it waits
    one_core.environment.cpu_count = one_core.loaders[0].cpu_count = 1
    one_core.loaders[0].worker_cpu_s = 0.008
    assert d110.check(one_core) == []
    one_core.loaders[0].worker_cpu_s = 0.012
    assert only(d110.check(one_core), "D110")


def test_d110_info_when_busy_workers_take_every_core_without_a_long_wait():
    # num_workers=os.cpu_count(): 8 workers on 8 cores, a 2 ms wait (no D110 warning), the
    # workers' CPU per batch as large as the rest of the step: they take turns with training
    run = workers_run("ImageFiles", num_workers=8, data_s=0.002)
    run.loaders[0].worker_cpu_s = 0.010
    finding = only(d110.check(run), "D110")
    assert finding.severity == "info" and finding.saving == 0.0
    assert "num_workers=8 on 8 CPU core(s)" in evidence_text(finding)
    assert "none left for the training process" in evidence_text(finding)
    assert "os.cpu_count()" in finding.fix and finding.saving_how.startswith("not measured")
    assert finding.saving_basis == "not measured"
    run.loaders[0].worker_cpu_s = 0.002  # workers mostly idle on a full queue: nothing to say
    assert d110.check(run) == []
    spare = workers_run("ImageFiles", num_workers=7, data_s=0.002)  # one core left: fine
    spare.loaders[0].worker_cpu_s = 0.010
    assert d110.check(spare) == []


def test_d110_silent_with_spare_cores_in_memory_data_or_a_small_wait():
    assert d110.check(workers_run("ImageFiles", num_workers=2)) == []  # D102 applies
    assert d102.check(workers_run("ImageFiles", num_workers=2)) != []
    assert d110.check(workers_run("TensorDataset", num_workers=7)) == []  # D109 applies
    assert d110.check(workers_run("ImageFiles", num_workers=7, data_s=0.005)) == []


def test_d105_fix_is_generic_not_an_image_conversion():
    finding = only(d105.check(data_bound_run(item_s=0.0004)), "D105")
    assert "permute" not in finding.fix and "255" not in finding.fix
    assert "augment_batch" in finding.fix and "num_workers=7" in finding.fix
    assert "400.0 µs per sample" in evidence_text(finding)


@pytest.mark.parametrize("rule", [d107, d108, d109, d110])
def test_more_data_rules_silent_without_steps(rule):
    run = dataclasses.replace(workers_run("TensorDataset", num_workers=2), steps=[])
    assert rule.check(run) == []


def zipped_streams_run():
    """Two loaders zipped (QA F18): a worker-fed IterableDataset that waits 6x longer than an
    in-process one. Data is 80% of the step."""
    fed = good_loader(
        location="train.py:13",
        dataset_type="Stream",
        iterable_dataset=True,
        num_workers=2,
        wait_s=0.060,
        item_s=None,
    )
    local = good_loader(
        location="train.py:14",
        dataset_type="Stream",
        iterable_dataset=True,
        num_workers=0,
        wait_s=0.010,
        item_s=0.00001,
    )
    run = good_cpu_run(
        steps=make_steps(data=0.008, forward=0.001, backward=0.001), loaders=[fed, local]
    )
    run.compute.dispatch_overhead_s = 5e-6
    return run


def test_iterable_datasets_never_get_the_batched_sampler_fix():
    run = zipped_streams_run()
    assert d108.check(run) == [] and d109.check(run) == []  # a sampler cannot apply to them


def test_a_rule_about_one_of_two_loaders_claims_only_its_part_of_the_wait():
    run = zipped_streams_run()
    finding = only(d101.check(run), "D101")  # the in-process stream: 1/7 of 8 ms
    assert "train.py:14" in evidence_text(finding)
    assert finding.details["data_s"] == pytest.approx(0.008 / 7)
    assert finding.saving <= 0.008 / 7 / 0.010 + 1e-9
    map_style = indexing_run(0.004)
    map_style.loaders.append(
        good_loader(location="train.py:40", num_workers=0, dataset_type="ImageFiles", wait_s=0.001)
    )
    map_style.loaders[0].wait_s = 0.003
    d108_finding = only(d108.check(map_style), "D108")
    assert d108_finding.details["data_s"] == pytest.approx(0.004 * 3 / 4)
    map_style.loaders[0].wait_s, map_style.loaders[1].wait_s = 0.001, 0.003
    assert d108.check(map_style) == []  # its own part, 1 of 4.8 ms, is under 25%


def slow_collate_run(collate_s: float):
    """A list-backed dataset of token tensors (trivial __getitem__) and a Python padding loop."""
    run = indexing_run(0.006)
    run.loaders[0].dataset_type = "Sequences"
    run.loaders[0].item_s = 0.000001
    run.loaders[0].collate_s = collate_s
    return run


def test_d111_names_a_slow_collate_fn_instead_of_d108():
    run = slow_collate_run(0.005)  # 5 ms for 64 samples: 78 µs each
    run.compute.dispatch_overhead_s = 1e-6  # 78 trivial ops per sample: a collate of its own
    finding = only(d111.check(run), "D111")
    step_s = 0.0068
    assert finding.saving == pytest.approx((0.005 - 3 * 1e-6 * 64) / step_s)
    assert "pad_sequence" in finding.fix and "num_workers=7" in finding.fix
    assert "78 trivial ops' worth" in evidence_text(finding)
    assert d108.check(run) == []  # the batched sampler would drop the padding collate


def test_d111_reads_the_batch_of_a_loader_built_with_a_batch_sampler():
    # DataLoader(docs, batch_sampler=BucketBatchSampler(...), collate_fn=PadCollate()): no
    # batch_size; the samples its fetches were handed (64 a batch) stand for it
    run = slow_collate_run(0.005)
    run.compute.dispatch_overhead_s = 1e-6
    run.loaders[0].batch_size = None
    assert d111.check(run) == []  # nothing says how many samples a collate assembled
    run.loaders[0].samples_per_batch = 64.0
    finding = only(d111.check(run), "D111")
    assert "Collating a batch of 64 took" in evidence_text(finding)
    assert d108.check(run) == []


def test_d111_flags_a_collate_from_15_percent_of_the_step():
    run = slow_collate_run(0.0012)  # 19 µs a sample, 1.2 of a 6.8 ms step: 18%
    run.compute.dispatch_overhead_s = 1e-7
    assert only(d111.check(run), "D111").details["collate_share"] == pytest.approx(0.0012 / 0.0068)
    run.loaders[0].collate_s = 0.0009  # 13%
    assert d111.check(run) == []


def test_d111_silent_for_the_default_collate_or_a_small_share():
    run = slow_collate_run(0.0003)  # 4.7 µs per sample: default-collate territory
    run.compute.dispatch_overhead_s = 1e-6
    assert d111.check(run) == []
    assert d108.check(run) != []
    small = slow_collate_run(0.005)
    small.compute.dispatch_overhead_s = 1e-6
    for step in small.steps:  # data is 10% of a long step
        step.phases["data"], step.wall_s = 0.005, 0.05
        step.phases["forward"] = 0.045 - 0.0004 - 0.0001
    assert d111.check(small) == []
    assert d111.check(good_cpu_run()) == []


def test_d108_fix_asks_a_custom_dataset_for_getitems():
    run = indexing_run(0.004)
    run.loaders[0].dataset_type = "Features"
    assert "def __getitems__(self, indices)" in only(d108.check(run), "D108").fix
    assert "__getitems__" not in only(d108.check(indexing_run(0.004)), "D108").fix


def test_respawning_workers_over_in_memory_tensors_get_one_advice_d109():
    run = respawning_run(0.2)
    run.loaders[0].dataset_type = "TensorDataset"
    assert d103.check(run) == []  # persistent workers would keep a hand-over that costs more
    finding = only(d109.check(run), "D109")  # steady wait is small: the start-up alone decides
    epoch_s = 4 * 0.0137
    overhead = 0.2 - 0.0005
    steady = 0.8 * 0.0005 / 0.0137  # the batched fetch's saving on the steady wait
    assert finding.saving == pytest.approx(steady + overhead / (epoch_s + 0.2), rel=1e-3)
    assert "3 times" in evidence_text(finding) and "num_workers=0" in finding.fix


def test_respawning_workers_are_fixed_first_not_counted_as_too_few():
    # a busy machine: workers re-spawned every epoch and a large wait in most steps
    run = respawning_run(0.2)
    for step in run.steps:
        step.phases["data"] += 0.03
        step.wall_s += 0.03
    for workers in (2, 7):  # below and at one worker per spare core
        run.loaders[0].num_workers = workers
        assert d103.check(run) != []
        assert d102.check(run) == [] and d110.check(run) == [], workers


def test_d108_keeps_a_custom_batch_sampler():
    run = indexing_run(0.004)
    run.loaders[0].batch_size = None  # DataLoader(dataset, batch_sampler=Buckets(...))
    fix = only(d108.check(run), "D108").fix
    assert "sampler=batch_sampler, batch_size=None" in fix and "RandomSampler" not in fix


def test_d111_silent_for_a_default_collate_on_a_busy_machine():
    # a TensorDataset's default collate stretched 30x in wall time by other processes (the
    # planted D108 script once got D111 on top): below its own indexing cost, and in CPU time
    # near the floor
    run = indexing_run(0.004)  # 40 µs per item
    run.compute.dispatch_overhead_s = 1e-6
    run.loaders[0].collate_s = 64 * 3e-6 * 30  # 90 µs per sample in wall time
    for step in run.steps:
        step.cpu_share = 1 / 30
    assert d111.check(run) == []
    assert only(d108.check(run), "D108")
    run.loaders[0].item_s = 1e-6  # a collate 90x its item: work of its own, even at 1/30 share
    run.loaders[0].collate_s = 64 * 60e-6 * 30
    assert only(d111.check(run), "D111")


def test_d111_reads_a_collate_returning_few_bytes_slowly_as_python_work():
    # negatives drawn one by one with `random` (round 6's missed recsys script): 6 trivial ops
    # per sample, far under the 50 a large copy needs, but 45 KB a batch at ~10 MB/s
    run = slow_collate_run(0.005)  # 78 µs per sample
    run.compute.dispatch_overhead_s = 13e-6  # 6 trivial ops per sample
    assert d111.check(run) == [] and d108.check(run) != []  # bytes unknown: as before
    run.loaders[0].collate_bytes = 45_056
    assert only(d111.check(run), "D111") and d108.check(run) == []
    # the default collate stacking large samples (3x64x64 floats) as fast: a copy, not Python
    run.loaders[0].collate_bytes = 64 * 3 * 64 * 64 * 4
    assert d111.check(run) == [] and d108.check(run) != []
    # few bytes, but under three trivial ops per sample: the default collate's own cost
    run.loaders[0].collate_bytes = 1024
    run.compute.dispatch_overhead_s = 30e-6
    assert d111.check(run) == []


def test_batched_fetch_fix_does_not_ask_torch_subset_for_getitems():
    run = indexing_run(0.004)
    run.loaders[0].dataset_type = "Subset"  # random_split over a TensorDataset (QA2-13)
    fix = only(d108.check(run), "D108").fix
    assert "def __getitems__(self, indices): return self.x" not in fix
    assert "passes a list of indices on to the" in fix and "BatchSampler" in fix


def cifar_tutorial_run(data_s: float = 0.0009):
    """The official CIFAR tutorial loop (QA2-10): a custom in-memory Dataset, batch_size=4,
    num_workers=2 on 2 cores; __getitem__ ran only in the workers (untimed)."""
    return good_cpu_run(
        steps=make_steps(
            batch_size=4, data=data_s, forward=0.0005, backward=0.0007, optimizer=0.0001
        ),
        loaders=[
            good_loader(
                dataset_type="RandomCIFAR",
                batch_size=4,
                num_workers=2,
                persistent_workers=False,
                cpu_count=2,
                batches=11,
            )
        ],
    )


def test_d112_explains_a_large_data_share_of_tiny_batches_through_workers():
    run = cifar_tutorial_run()
    finding = only(d112.check(run), "D112")
    share = 0.0009 / 0.0022
    assert finding.saving == pytest.approx(share * 0.75)
    assert finding.changes_semantics is True and finding.severity == "info"
    assert "batches of 4 sample(s) from 2 worker process(es)" in evidence_text(finding)
    assert "batch_size=16, num_workers=2" in finding.fix
    assert "batch_size=4, num_workers=0" in finding.fix
    assert d110.check(run) == [] and d102.check(run) == []  # more workers: wrong advice here


def test_d112_silent_for_large_batches_small_waits_or_in_memory_tensors():
    assert d112.check(cifar_tutorial_run(data_s=0.0002)) == []  # 13% of the step
    big = cifar_tutorial_run()
    big.loaders[0].batch_size = 64
    assert d112.check(big) == []
    tensors = cifar_tutorial_run()
    tensors.loaders[0].dataset_type = "TensorDataset"
    assert d112.check(tensors) == [] and only(d109.check(tensors), "D109")
    assert d112.check(good_cpu_run()) == []


def test_d101_estimate_takes_a_worker_per_core_where_data_work_dwarfs_the_compute():
    """d105 on 2 cores: data 8x the compute; one worker (a core left to training) hides 8% of
    the step, `--try workers` (one per core) gained 34%."""
    run = good_cpu_run(
        steps=make_steps(data=0.080, forward=0.004, backward=0.005, optimizer=0.001),
        loaders=[good_loader(num_workers=0, persistent_workers=False, dataset_type="Images")],
    )
    run.environment.cpu_count = run.loaders[0].cpu_count = 2
    finding = only(d101.check(run), "D101")
    # 2 workers: max(80 / 2 - 10, (80 + 10 + h) / 2 - 10 - h) = 35 - h/2 ms left, h received:
    # 45 - h/2 of 90 ms saved (1 worker: 10)
    assert finding.saving == pytest.approx((45 - HANDOVER_MS / 2) / 90)
    assert "num_workers=2" in finding.fix


def test_d108_sees_through_a_subset_of_a_tensor_dataset():
    """A k-fold loop's `Subset(TensorDataset, fold)` (random_split's Subsets alike), timed above
    the trivial-item line on a busy machine: the dataset's type alone said "Subset", so the
    per-sample fetch got D101's workers instead (m09)."""
    run = indexing_run(0.004)
    loader = run.loaders[0]
    loader.dataset_type, loader.item_s = "Subset", 0.0004
    assert d108.check(run) == []  # not known to wrap tensors
    loader.wrapped_dataset_types = ("TensorDataset",)
    assert "Subset" in evidence_text(only(d108.check(run), "D108"))
    assert d101.check(run) == []  # workers would not help


def test_d106_fires_on_rows_of_python_numbers_converted_per_step():
    run = good_cpu_run()
    run.tensor_creation.from_nested_list = 1
    run.tensor_creation.seconds_per_step = 0.005
    finding = only(d106.check(run), "D106")
    assert "rows of Python numbers 1 time(s)" in evidence_text(finding)
    assert "table[batch_indices]" in finding.fix and "NumPy arrays" not in evidence_text(finding)


def test_d112_reads_a_batch_samplers_batches_from_the_steps():
    """A bucketing `batch_sampler` yielding 2-sample batches through a worker (k31): the loader's
    batch_size is None there, so the rule never looked at it."""
    run = cifar_tutorial_run()
    run.loaders[0].batch_size = None  # DataLoader(batch_sampler=...): batch_size is None
    finding = only(d112.check(run), "D112")  # the steps consumed batches of 4
    assert "batches of 4 sample(s)" in evidence_text(finding)
    assert "batch_sampler's batches held about 4 sample(s)" in finding.fix
    run.loaders[0].sampler_type = "BatchSampler"  # whole batches from __getitem__: not D112's
    assert d112.check(run) == []


def test_d103_silent_for_several_persistent_loaders_built_once_at_one_line():
    """FedAvg's clients (h16's control: 8 persistent loaders built at one line, 48 epochs
    between them) start their workers once each; a loader built again every epoch does not
    keep them."""
    run = respawning_run(0.2)  # 3 epochs, a 200 ms start-up each
    loader = run.loaders[0]
    loader.persistent_workers, loader.loaders_built = True, 3  # one built for each epoch
    assert only(d103.check(run), "D103")
    loader.loaders_built = 2  # two loaders built once, iterated 3 times between them
    assert d103.check(run) == []


def test_d112_sees_a_streamed_datasets_tiny_batches_through_a_worker():
    """An IterableDataset of few-shot episodes batched 4 at a time through a worker (the
    thirteenth set, p12): the rule looked at map-style datasets only. One that yields its own
    batches (`batch_size=None`) stays out: its batch size is not the loader's to know."""
    run = cifar_tutorial_run()
    run.loaders[0].iterable_dataset = True
    assert "batches of 4 sample(s)" in evidence_text(only(d112.check(run), "D112"))
    run.loaders[0].batch_size = None
    assert d112.check(run) == []
