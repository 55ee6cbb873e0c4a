"""What individual probes record on a real script with the patterns planted: torch.tensor() on
ndarrays, torch.save and print inside steps, float64 compute, host reads by call site, model
facts, FLOPs, memory; plus the --profile window. In-process for speed."""

import json
import textwrap

import torch
from diagnose_prelude import PRELUDE

from torchdoctor.diagnose.api import diagnose_script
from torchdoctor.diagnose.probes.optimizer import _implementations
from torchdoctor.diagnose.probes.peak_flops import gpu_peak

PLANTED = """
import numpy as np
class Rows(Dataset):
    def __init__(self):
        self.rows = np.random.rand(64, 6)
    def __len__(self):
        return 64
    def __getitem__(self, i):
        label = torch.tensor([i % 2]).tolist()[0]            # a read in the data pipeline
        return torch.tensor(self.rows[i]), label            # copy of an ndarray, float64
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(1, 4, 3)
        self.fc = nn.Linear(16, 2)
        self.drop = nn.Dropout(0.2)
    def forward(self, x):
        return self.fc(self.drop(self.conv(x.unsqueeze(1)).flatten(1)))
model = Net().double()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
import io, logging
log = logging.getLogger("train")
log.addHandler(logging.StreamHandler(io.StringIO()))
log.setLevel(logging.INFO)
for step, (x, y) in enumerate(DataLoader(Rows(), batch_size=4)):
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if loss.item() > 100:                                    # a host read every step
        print("diverged")
    torch.save(model.state_dict(), "ckpt.pt")                # checkpoint every step
    line = f"step {step} loss {loss:.4f}"                    # formats a tensor
    log.info("step %d loss %s", step, loss.detach())         # a logging record
    log.debug("not emitted %s", loss)                        # below the logger's level
    if step % 2:
        val_loss = model(x).sum().item()                     # a validation metric's read
"""


def _lines(script):
    """comment -> line number, for the planted lines marked with a comment."""
    return {text.split("#")[-1].strip(): n for n, text in enumerate(script, 1) if "#" in text}


def test_planted_patterns_are_recorded_with_their_call_sites(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "train.py"
    script.write_text(PRELUDE + textwrap.dedent(PLANTED))
    lines = _lines(script.read_text().splitlines())
    run = diagnose_script(str(script), steps=4, warmup=2).run
    assert run.status == "stopped" and len(run.steps) == 4

    assert run.tensor_creation.from_ndarray == 4  # one per sample, batch of 4
    copy_line = lines["copy of an ndarray, float64"]
    assert run.tensor_creation.locations[0].endswith(f"train.py:{copy_line}")
    assert run.io.saves_in_steps == 4 and run.io.save_s_per_step > 0
    assert run.io.tensor_format_s_per_step > 0
    format_line = lines["formats a tensor"]
    formatted = next(s for s in run.sync_sites if s.location.endswith(f":{format_line}"))
    assert formatted.kind == "item"  # Tensor.__format__ reads the value: charged to the f-string
    assert run.precision.float64_ops > 0 and run.precision.float32_ops == 0
    assert run.compute.flops_per_step > 0 and run.compute.ops_per_step > 10
    # num_workers=0: the 4 per-sample torch.tensor() copies and the collate ran in this process
    assert 4 <= run.compute.data_ops_per_step < run.compute.ops_per_step
    read = next(s for s in run.sync_sites if s.kind == "item")
    assert read.location.endswith(f"train.py:{lines['a host read every step']}")
    assert read.device == "cpu" and read.per_step == 1  # a CPU read: not a real sync
    assert 0 < read.seconds_per_step < 0.01  # the call itself, timed
    assert formatted.seconds_per_step == 0  # formatting is timed whole, by the io probe
    assert run.io.log_records_per_step == 1 and run.io.log_s_per_step > 0
    assert all(step.syncs == 0 and step.host_reads >= 1 for step in run.steps)
    pipeline_line = f"train.py:{lines['a read in the data pipeline']}"
    assert not [s for s in run.sync_sites if s.location.endswith(pipeline_line)]
    # the validation forward is evaluation: its metric's read is not a per-step read
    assert run.evaluation.forwards >= 2
    val_mark = "a validation metric's read"
    val_line = f"train.py:{lines[val_mark]}"
    assert not [s for s in run.sync_sites if s.location.endswith(val_line)], run.sync_sites

    model = run.models[0]
    assert model.class_name == "Net" and model.conv_layers == 1 and model.dropout_layers == 1
    assert model.parameter_dtypes == {"float64": model.parameters}
    assert "fc: Linear(16->2)" in model.dims_not_multiple_of_8
    assert run.memory.source == "process_rss" and run.memory.peak_bytes > 0
    assert run.compute.peak_source != ""  # measured CPU matmul or "unknown", never a guess
    assert run.environment.input_shapes_fixed is True


def test_profile_window_names_the_top_ops(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(
        PRELUDE
        + textwrap.dedent(
            """
            model = nn.Linear(32, 32)
            for _ in range(12):
                model(torch.randn(16, 32)).sum().backward()
            """
        )
    )
    # the profiled steps (and the one absorbing the profiler's teardown) are never measured:
    # after the measured steps when the program is stopped, before them when it runs to its end
    run = diagnose_script(str(script), steps=4, warmup=2, profile=True).run
    note = next(n for n in run.notes if n.startswith("--profile"))
    assert "aten::" in note and "steps 6-8, outside the measured steps" in note
    assert [s.index for s in run.steps] == [2, 3, 4, 5]
    assert run.status == "stopped"
    run = diagnose_script(str(script), steps=0, warmup=2, profile=True).run
    note = next(n for n in run.notes if n.startswith("--profile"))
    assert "steps 2-4, outside the measured steps" in note
    assert [s.index for s in run.steps] == list(range(6, 12))


def test_h100_peaks_are_within_15_percent_of_the_matmul_rates_measured_on_one():
    # bench/gpu_peak.py on an H100 80GB HBM3 (round 13, three runs): bf16 747-784 TFLOP/s,
    # fp16 722-727, tf32 372-396, fp32 51; the datasheet's 989 / 989 / 494 / 67 were 25-37% above
    for precision, low, high in (
        ("bf16", 747, 784),
        ("fp16", 722, 727),
        ("tf32", 372, 396),
        ("fp32", 51, 51),
    ):
        value = gpu_peak("NVIDIA H100 80GB HBM3", precision)[0] / 1e12
        assert high / 1.15 <= value <= low * 1.15, (precision, value)


def test_gpu_peak_table_names_its_source_and_never_guesses():
    value, source = gpu_peak("NVIDIA H100 80GB HBM3", "bf16")
    assert value == 762e12
    assert source == "table: H100 (bf16 matmul measured on an H100 80GB HBM3; datasheet 989)"
    assert gpu_peak("NVIDIA A100-SXM4-80GB", "bf16") == (
        312e12,
        "table: A100 (bf16 dense, datasheet)",
    )
    assert gpu_peak("NVIDIA H100 PCIe", "tf32")[0] == 378e12
    assert gpu_peak("Tesla T4", "bf16") == (None, "unknown: no bf16 peak for T4 in the table")
    assert gpu_peak("Some Future GPU", "bf16") == (None, "unknown")


def test_hook_points_apply_fixes_through_the_probes(tmp_path):
    """The interception points under diagnose: loader kwargs rewritten by the loader probe, the
    root forward run through a middleware by the forward probe (no second patch of torch)."""
    import torch

    from torchdoctor.intercept.hooks import Hooks

    script = tmp_path / "train.py"
    script.write_text(
        PRELUDE
        + textwrap.dedent(
            """
            data = TensorDataset(torch.randn(256, 8), torch.randint(0, 2, (256,)))
            model = nn.Linear(8, 2)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in DataLoader(data, batch_size=4):
                loss = nn.functional.cross_entropy(model(x).float(), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
            """
        )
    )

    def in_autocast(module, call, args, kwargs):
        if not torch.is_grad_enabled():
            return call(module, args, kwargs)
        with torch.autocast("cpu", torch.bfloat16):
            return call(module, args, kwargs)

    hooks = Hooks()
    hooks.loader_kwargs.append(lambda kwargs: {**kwargs, "batch_size": 16})
    hooks.around_forward.append(in_autocast)
    run = diagnose_script(str(script), steps=3, warmup=2, hooks=hooks).run
    assert run.loaders[0].batch_size == 16
    assert all(step.batch_size == 16 for step in run.steps)
    assert run.precision.autocast_forwards == run.precision.forwards == 3
    assert run.precision.autocast_dtype == "bfloat16"
    assert not torch.is_autocast_enabled("cpu")  # the context was left after each forward


def test_rank_dir_merges_every_ranks_observation_into_rank_0(diagnose_here, tmp_path, monkeypatch):
    """What torchrun would do, one rank after the other: rank 1 writes, rank 0 merges."""
    body = """
        model = nn.Linear(8, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(8):
            model(torch.randn(BATCH, 8)).sum().backward()
            opt.step()
            opt.zero_grad()
        """
    monkeypatch.setenv("WORLD_SIZE", "2")
    ranks = tmp_path / "ranks"
    for rank, batch in ((1, 6), (0, 4)):
        monkeypatch.setenv("RANK", str(rank))
        report = diagnose_here(body.replace("BATCH", str(batch)), steps=3, rank_dir=str(ranks))
    distributed = report.run.distributed
    assert distributed.world_size == 2
    assert distributed.per_rank_batch == [4, 6]
    assert len(distributed.per_rank_step_s) == 2


def test_anomaly_mode_and_default_dtype_are_observed_and_put_back(diagnose_here):
    import warnings

    import torch

    body = """
    model = nn.Linear(8, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.autograd.set_detect_anomaly(True)  # a NaN hunt never switched off: slows every op
    for step in range(10):
        loss = model(torch.randn(4, 8)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    torch.autograd.set_detect_anomaly(False)  # never reached: the run is stopped before
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns that anomaly detection is on
        report = diagnose_here(body, steps=3, warmup=2)
    assert report.run.environment.anomaly_detection is True
    assert report.run.environment.default_dtype == "float32"
    assert not torch.is_anomaly_enabled()  # the stopped program's mode does not leak to us
    plain = body.replace("set_detect_anomaly(True)", "set_detect_anomaly(False)")
    float64 = "torch.set_default_dtype(torch.float64)\n" + textwrap.dedent(plain)
    report = diagnose_here(float64, steps=3, warmup=2)
    assert report.run.environment.anomaly_detection is False
    assert report.run.environment.default_dtype == "float64"
    assert torch.get_default_dtype() == torch.float32  # put back after the run


def test_recomputed_blocks_and_optimizer_subclasses_keep_their_user_sites(diagnose_here):
    """Activation checkpointing re-runs blocks inside backward(): they are not new models (their
    parameters counted twice). A user's Optimizer subclass is located where it was built, not
    at its `super().__init__` line."""
    report = diagnose_here(
        """
        from torch.utils.checkpoint import checkpoint
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList(nn.Linear(16, 16) for _ in range(3))
            def forward(self, x):
                for block in self.blocks:
                    x = checkpoint(block, x, use_reentrant=False)
                return x
        class PlainSGD(torch.optim.Optimizer):
            def __init__(self, params, lr):
                super().__init__(params, {"lr": lr})
            @torch.no_grad()
            def step(self):
                for group in self.param_groups:
                    for p in group["params"]:
                        p.add_(p.grad, alpha=-group["lr"])
        model = Net()
        opt = PlainSGD(model.parameters(), lr=0.01)  # built here
        for step in range(8):
            loss = model(torch.randn(4, 16)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        steps=3,
        warmup=2,
    )
    run = report.run
    assert [m.class_name for m in run.models] == ["Net"]
    assert run.models[0].activation_checkpointing
    assert run.memory.parameter_bytes == 3 * (16 * 16 + 16) * 4
    assert [o.location.rsplit(":", 1)[1] for o in run.optimizers] == ["26"]  # "built here"


def test_cpu_peak_only_goes_up_and_utilization_never_exceeds_one(tmp_path, monkeypatch):
    # a peak cached from a run on a busy machine is a lower bound: a new measurement replaces it
    import torch

    from torchdoctor.diagnose.probes import peak_flops

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    key = f"{peak_flops._cpu_name()}|threads={torch.get_num_threads()}|torch={torch.__version__}"
    cache = tmp_path / "cache" / "torchdoctor" / "cpu_peak.json"
    cache.parent.mkdir(parents=True)
    cache.write_text(json.dumps({key: 1e6}))  # 1 MFLOP/s: far below any real CPU
    value, source = peak_flops.cpu_peak()
    assert value > 1e8 and "best of all runs" in source
    assert json.loads(cache.read_text())[key] == value
    # when the matmul cannot run, the stale value is all there is: the run's own FLOP/s
    # then bound the peak from below. The peak is looked up for the program's thread count, one
    # (PRELUDE), not this process's: on a machine where the tests run with more threads (no
    # OMP_NUM_THREADS=1, 16 cores) the stale value was cached under another key
    script_key = f"{peak_flops._cpu_name()}|threads=1|torch={torch.__version__}"
    cache.write_text(json.dumps({script_key: 1e6}))

    def cannot_measure():
        raise RuntimeError("no BLAS")

    monkeypatch.setattr(peak_flops, "_measure_cpu_matmul", cannot_measure)
    script = tmp_path / "train.py"
    script.write_text(
        PRELUDE
        + textwrap.dedent("""
        model = nn.Linear(256, 256)
        for _ in range(10):
            model(torch.randn(64, 256)).sum().backward()
        """)
    )
    compute = diagnose_script(str(script), steps=4, warmup=2).run.compute
    assert compute.utilization == 1.0
    assert compute.peak_source.endswith("raised to this run's achieved FLOP/s")


def test_compiled_model_keeps_running_compiled_and_recompiles_are_named(diagnose, tmp_path):
    # the op-counting dispatch mode would make dynamo run the compiled forward eagerly for good:
    # the forward says which way it ran (a trace-time constant), in a fresh process
    d = diagnose(
        """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 2)
            def forward(self, x):
                y = self.fc(x)
                return y if torch.compiler.is_compiling() else y + 1000.0
        model = torch.compile(Net(), backend="eager")
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        log = open(sys.argv[1], "w")
        for step in range(12):
            out = model(torch.randn(16 if step != 4 else 12, 8))  # step 4: a new shape
            print("compiled" if out.abs().mean().item() < 100 else "eager", file=log, flush=True)
            out.pow(2).mean().backward()
            opt.step()
            opt.zero_grad()
        """,
        "--steps", "4", "--warmup", "2",
        args=(str(tmp_path / "ran.txt"),),
    )  # fmt: skip
    assert d.returncode == 0, d.stderr
    # activations are not counted on a compiled model: no global module hook may be on when it
    # runs (dynamo warned about them as if the program had registered them)
    assert "global hooks" not in d.stderr, d.stderr
    assert (tmp_path / "ran.txt").read_text().split() == ["compiled"] * 6
    assert any("uses torch.compile" in note for note in d.run["notes"])
    assert d.run["compute"]["ops_per_step"] is None
    # the new shape recompiled in step 4, and the slow step's note says so
    assert [s["compiles"] > 0 for s in d.run["steps"]] == [False, False, True, False]
    assert any(
        "torch.compile compiled new code during step(s) 4" in n for n in d.report["step_notes"]
    ), d.report["step_notes"]


def test_cpu_share_says_when_the_step_thread_was_not_running(tmp_path):
    # a step that sleeps 20 ms holds the CPU for well under half of its time, whatever the load
    script = tmp_path / "train.py"
    script.write_text(
        PRELUDE
        + textwrap.dedent("""
        model = nn.Linear(8, 2)
        for _ in range(8):
            model(torch.randn(4, 8)).sum().backward()
            time.sleep(0.02)
        """)
    )
    run = diagnose_script(str(script), steps=4, warmup=2).run
    assert all(s.cpu_share is not None and 0 <= s.cpu_share < 0.5 for s in run.steps)
    assert run.compute.cpu_share < 0.5


def test_torchs_own_host_reads_are_not_the_programs_but_the_users_are(tmp_path, monkeypatch):
    """AdamW and LBFGS read CPU scalars every step (step counts, `float(loss)`, truth tests of
    tensors): the host-read probe dismisses them by their caller, and still records the
    program's own read on the same tensors' kind."""
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "train.py"
    script.write_text(
        PRELUDE
        + textwrap.dedent(
            """
            model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
            adamw = torch.optim.AdamW(model[0].parameters(), lr=1e-3)
            lbfgs = torch.optim.LBFGS(model[2].parameters(), max_iter=3)
            x, y = torch.randn(16, 4), torch.randn(16, 1)
            def closure():
                lbfgs.zero_grad()
                loss = nn.functional.mse_loss(model(x), y)
                loss.backward()
                return loss
            for step in range(8):
                loss = nn.functional.mse_loss(model(x), y)
                adamw.zero_grad()
                loss.backward()
                adamw.step()
                lbfgs.step(closure)
                total = loss.item()                                 # the program's read
            """
        )
    )
    read_line = next(
        n for n, text in enumerate(script.read_text().splitlines(), 1) if "program's read" in text
    )
    run = diagnose_script(str(script), steps=3, warmup=2).run
    assert run.status == "stopped", run.error
    assert [(s.kind, s.location.rsplit("/", 1)[-1]) for s in run.sync_sites] == [
        ("item", f"train.py:{read_line}")
    ], run.sync_sites


OPTIMIZER_WITH_PROGRAM_CODE = {
    "hook": """
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        optimizer.register_step_post_hook(
            lambda opt, args, kwargs: opt.param_groups[0]["params"][0].sum().item()  # step read
        )
    """,
    "subclass": """
        class Lion(torch.optim.AdamW):
            def step(self, closure=None):
                out = super().step(closure)
                self.seen = self.param_groups[0]["params"][0].sum().item()  # step read
                return out
        optimizer = Lion(model.parameters(), lr=1e-3)
    """,
}


def test_reads_inside_an_optimizer_step_that_runs_the_programs_code_are_still_recorded(
    tmp_path, monkeypatch
):
    """During the step of one of torch's own optimizers (no closure, no hooks) the `.item()`
    wrapper is lifted: torch's reads there are dismissed anyway. A step that runs the program's
    code (a step hook, an optimizer subclass of the program's) keeps it, and it is back after
    every step: the program's reads there and after the step are counted every step."""
    import torch

    monkeypatch.chdir(tmp_path)
    for name, optimizer in OPTIMIZER_WITH_PROGRAM_CODE.items():
        script = tmp_path / f"{name}.py"
        script.write_text(
            PRELUDE
            + "model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))\n"
            + textwrap.dedent(optimizer)
            + textwrap.dedent(
                """
                x, y = torch.randn(16, 4), torch.randn(16, 1)
                for step in range(10):
                    loss = nn.functional.mse_loss(model(x), y)
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    total = loss.item()                                 # after the step
                """
            )
        )
        lines = script.read_text().splitlines()
        expected = [
            f"{name}.py:{n}"
            for n, text in enumerate(lines, 1)
            if "step read" in text or "after the step" in text
        ]
        run = diagnose_script(str(script), steps=4, warmup=2).run
        assert run.status == "stopped", run.error
        found = {s.location.rsplit("/", 1)[-1]: s.count for s in run.sync_sites}
        # one read of each per iteration (the subclass's step counts as two steps, both ways)
        assert sorted(found) == expected and len(set(found.values())) == 1, (name, found)
        assert "item" not in torch.Tensor.__dict__  # torch's own method again after the run


def test_copies_on_a_machine_without_an_accelerator_are_not_host_to_device_time(diagnose_here):
    import pytest
    import torch

    if torch.accelerator.is_available():
        pytest.skip("an accelerator is present: a top-level copy may be host-to-device there")
    body = """
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(10):
        x = torch.randn(4, 8).to("cpu", non_blocking=True)  # a device-agnostic loop's copy
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # a .to(device) per gradient
        opt.step()
    """
    report = diagnose_here(body, steps=4, warmup=2)
    steps = report.run.steps
    assert len(steps) == 4 and all(s.phases["backward"] > 0 for s in steps)
    assert all(s.phases.get("h2d", 0.0) == 0.0 for s in steps)  # no copy can reach a device
    assert report.run.transfers.copies_per_step == 0


def test_an_optimizers_implementations_are_what_it_accepts_not_its_name():
    """Rule D210 reads these: RAdam has foreach and no fused kernel, LBFGS and SparseAdam
    neither; a subclass whose constructor names no flag still takes its base's (its defaults)."""
    params = [torch.nn.Parameter(torch.zeros(2))]
    assert _implementations(torch.optim.RAdam(params, lr=0.1)) == ("foreach",)
    assert _implementations(torch.optim.LBFGS(params)) == ()
    assert _implementations(torch.optim.SparseAdam(params)) == ()

    class PlainAdam(torch.optim.Adam):
        def __init__(self, params):
            super().__init__(params, lr=1e-3)

    assert _implementations(PlainAdam(params)) == ("foreach", "fused")


def test_a_loaders_dataset_is_seen_through_torchs_subset_and_concat_wrappers():
    from torch.utils.data import ConcatDataset, StackDataset, Subset, TensorDataset, random_split

    from torchdoctor.diagnose.probes.loader import _wrapped_types

    tensors = TensorDataset(torch.zeros(10, 2))
    assert _wrapped_types(tensors) == ()
    assert _wrapped_types(random_split(tensors, [5, 5])[0]) == ("TensorDataset",)
    assert _wrapped_types(ConcatDataset([tensors, Subset(tensors, [1])])) == ("TensorDataset",)
    assert _wrapped_types(StackDataset(image=tensors, label=tensors)) == ("TensorDataset",)


ROWS_PER_STEP = """
rows = torch.randn(256, 16).tolist()  # records kept as lists of floats
model = nn.Linear(16, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(40):
    x = torch.tensor([rows[(step + i) % 256] for i in range(64)])  # rows of numbers
    y = torch.tensor([i % 2 for i in range(64)])  # a flat list: not timed
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_torch_tensor_on_rows_of_python_numbers_is_timed(tmp_path, monkeypatch):
    """`torch.tensor([row, ...])` per step (m07's curriculum batches, rows read as lists): the
    probe timed ndarray inputs only, so D106 could not see it."""
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "train.py"
    script.write_text(PRELUDE + textwrap.dedent(ROWS_PER_STEP))
    run = diagnose_script(str(script), steps=4, warmup=2, whatif=False).run
    created = run.tensor_creation
    assert created.from_nested_list == 1 and created.from_ndarray == 0, created
    assert created.seconds_per_step > 0 and created.row_locations[0].startswith("train.py:")
    assert created.locations == []  # a hot line building the rows stays D801's to name
