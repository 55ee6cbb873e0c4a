"""Overhead of `torchdoctor diagnose` on clean training loops, one row per loop.

Rows: `mlp` (an MLP on DataLoader batches: a short step), `lstm_cell_lbfgs` (an LSTMCell called
once per timestep, two layers, trained with LBFGS and a closure: hundreds of module calls and
several forward/backward passes per step), `many_modules` (a deep stack of tiny modules: module
calls and AdamW's per-parameter host reads dominate the step), `transformer_lm` (a small causal
transformer LM with AdamW and gradient clipping), `per_sample_dataset` (an MLP on a dataset that
makes each sample in `__getitem__` as torchvision's MNIST does, `int()` of its label: a host
read per sample inside the DataLoader), `rl_episode` (REINFORCE as pytorch/examples writes it:
one small policy forward per environment step with autograd on, the episode's loss
backpropagated once and one optimizer step per episode: many root forwards per training
step), `prefetch_thread` (an MLP fed through a queue by a thread of the program's own that
builds each batch in pure Python: two busy Python threads, so the GIL changes hands at the
switch interval the line sampler lowers). For each row it runs the same loop plain, under
the probes (torchdoctor.watch(), which installs exactly the hooks `torchdoctor diagnose`
installs) and under the probes without the line sampler, in interleaved rounds in one process
(bench/_paired.py), and prints the paired ratio of the median step times with its spread
(target: <= 1.05). The sampled step (op and FLOP counting) is a warm-up step of each watched
round and is not timed, as in a real diagnosis.

Three clocks: wall time (what a user waits for), the main thread's CPU time (what the probes
cost the training thread) and the whole process's CPU time ("proc": the line sampler's thread
too, which runs on another core when there is one). The target (<= 1.05) is on the step time:
wall, and the main thread's CPU, which with one torch thread holds all the loop's work and stays
meaningful on a shared, overloaded machine where wall times swing several-fold. The first
line of a row ("OVERHEAD") is the target's number read three ways: the median of the paired
rounds, the mean step over all rounds, the fastest step of each mode (the least disturbed on a
loaded machine). The block after the page faults is the line sampler's share: diagnose over
diagnose without the sampler, both diagnosed, so it is not the overhead.

`--per-probe` answers where the probes' cost goes: per row it runs plain, every probe but the
line sampler, and that set with one probe left out (`DiagnoseConfig.without_probes`), each
probe in turn, all in the same interleaved rounds, and prints each probe's paired cost (the
set's time over the set without it). A probe's cost is not independent of the others (they
share the step tracker's phase stack and wrap the same functions), so the column does not add
up exactly to the set's cost.

The line sampler takes its first FULL_RATE_SAMPLES samples at the full rate and then slows down
(diagnose/probes/lines.py), so its cost per step depends on the round's length: `--steps 8`
rounds measure what a short diagnosis pays, `--steps 600` rounds a long one's steady state.

    .venv/bin/python bench/diagnose_overhead.py [--rounds 20] [--steps 30] [--threads 1]
        [--loops mlp,lstm_cell_lbfgs,many_modules,transformer_lm,per_sample_dataset,rl_episode,
        prefetch_thread] [--per-probe]
"""

from __future__ import annotations

import argparse
import itertools
import math
import resource
import statistics
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import torchdoctor
from _paired import StepTimes, interleaved, paired_ratio, print_ratios
from torchdoctor.diagnose.probes import PROBE_TYPES
from torchdoctor.diagnose.probes.lines import LineSampler


def make_loop(batch_size: int, width: int):
    """An MLP on DataLoader batches, SGD with momentum."""
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(4096, 784), torch.randint(0, 10, (4096,)))
    loader = DataLoader(data, batch_size=batch_size, shuffle=True, drop_last=True)
    model = nn.Sequential(
        nn.Linear(784, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 10)
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return _loader_loop(loader, model, optimizer)


class _DigitsLikeMnist(torch.utils.data.Dataset):
    """Samples made one by one as torchvision's MNIST makes them: a uint8 image scaled to float,
    and the label read out of a tensor with `int()` (a host read per sample, in the DataLoader)."""

    def __init__(self, size: int = 6000) -> None:
        self.data = torch.randint(0, 256, (size, 28, 28), dtype=torch.uint8)
        self.targets = torch.randint(0, 10, (size,))

    def __len__(self) -> int:
        return len(self.targets)

    def __getitem__(self, index: int):
        return self.data[index].float().div(255).flatten(), int(self.targets[index])


def make_per_sample_loop(batch_size: int = 100):
    """An MLP on a dataset that makes each sample in __getitem__ (MNIST-style), Adam."""
    torch.manual_seed(0)
    loader = DataLoader(_DigitsLikeMnist(), batch_size=batch_size, shuffle=True, drop_last=True)
    model = nn.Sequential(nn.Linear(784, 500), nn.ReLU(), nn.Linear(500, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    return _loader_loop(loader, model, optimizer)


def _loader_loop(loader, model, optimizer):
    def run(steps: int) -> list[tuple[float, float, int, float]]:
        batches = [iter(loader)]  # a new epoch each round

        def step() -> None:
            try:
                x, y = next(batches[0])
            except StopIteration:
                batches[0] = iter(loader)
                x, y = next(batches[0])
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()

        return _timed_steps(step, steps)

    return run


def _faults() -> int:
    """The main thread's minor page faults so far: memory the step touched for the first time
    (a count, so it does not depend on the machine's load)."""
    return resource.getrusage(resource.RUSAGE_THREAD).ru_minflt


def _timed_steps(step, steps: int) -> list[tuple[float, float, int, float]]:
    # (wall, main-thread CPU, page faults, process CPU) per step
    times: list[tuple[float, float, int, float]] = []
    last, last_cpu, last_faults = time.perf_counter(), time.thread_time(), _faults()
    last_process = time.process_time()
    for _ in range(steps):
        step()
        now, now_cpu, faults = time.perf_counter(), time.thread_time(), _faults()
        now_process = time.process_time()
        times.append(
            (now - last, now_cpu - last_cpu, faults - last_faults, now_process - last_process)
        )
        last, last_cpu, last_faults, last_process = now, now_cpu, faults, now_process
    return times


def _faults_line(rounds: dict[str, list[StepTimes]]) -> str:
    """Mean page faults per step of each mode (a count, so the same at any load). The mean, not
    the median: a heap that grows comes in bursts (most steps fault 0-1 times, a few hundreds)."""
    means = {
        mode: statistics.fmean(t[2] for steps in times for t in steps)
        for mode, times in rounds.items()
    }
    return ", ".join(f"{mode} {count:.1f}" for mode, count in means.items())


class _TwoCellSequence(nn.Module):
    """Sequence regression with two LSTMCells stepped by hand, one call per timestep."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.hidden = hidden
        self.first = nn.LSTMCell(1, hidden)
        self.second = nn.LSTMCell(hidden, hidden)
        self.readout = nn.Linear(hidden, 1)

    def forward(self, series: torch.Tensor) -> torch.Tensor:
        state1 = (series.new_zeros(len(series), self.hidden),) * 2
        state2 = state1
        predictions = []
        for column in series.split(1, dim=1):  # noqa: TD135 (the pattern this row measures)
            state1 = self.first(column, state1)
            state2 = self.second(state1[0], state2)
            predictions.append(self.readout(state2[0]))
        return torch.cat(predictions, dim=1)


def make_lstm_cell_lbfgs_loop(batch_size: int, timesteps: int = 40, hidden: int = 24):
    """LSTMCells per timestep and LBFGS with a closure (several passes per optimizer step)."""
    torch.manual_seed(0)
    phase = torch.rand(batch_size, 1) * 6.28
    series = torch.sin(torch.arange(timesteps + 1) * 0.2 + phase)
    inputs, targets = series[:, :-1], series[:, 1:]
    model = _TwoCellSequence(hidden)
    optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=4)

    def closure():
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(inputs), targets)
        loss.backward()
        return loss

    return lambda steps: _timed_steps(lambda: optimizer.step(closure), steps)


def make_many_modules_loop(batch_size: int, depth: int = 64, width: int = 32):
    """A deep stack of tiny blocks (Linear + LayerNorm + GELU): module calls dominate."""
    torch.manual_seed(0)
    model = nn.Sequential(
        *(
            nn.Sequential(nn.Linear(width, width), nn.LayerNorm(width), nn.GELU())
            for _ in range(depth)
        )
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = torch.randn(batch_size, width), torch.randn(batch_size, width)

    def step() -> None:
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    return lambda steps: _timed_steps(step, steps)


class _TinyLM(nn.Module):
    """A causal transformer language model (token + position embeddings, pre-norm layers)."""

    def __init__(self, vocab: int, context: int, width: int, layers: int) -> None:
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(context, width)
        layer = nn.TransformerEncoderLayer(
            width, nhead=4, dim_feedforward=4 * width, dropout=0.1, batch_first=True,
            norm_first=True,
        )  # fmt: skip
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(width, vocab)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(context))

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.tokens(idx) + self.positions(torch.arange(idx.shape[1]))
        return self.head(self.blocks(x, mask=self.mask, is_causal=True))


def make_transformer_lm_loop(batch_size: int, context: int = 32, vocab: int = 256):
    """A small GPT-style LM on random token windows of one long text, AdamW, grad clipping."""
    torch.manual_seed(0)
    text = torch.randint(0, vocab, (50_000,))
    model = _TinyLM(vocab, context, width=64, layers=2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)

    def step() -> None:
        starts = torch.randint(0, len(text) - context - 1, (batch_size,))
        x = torch.stack([text[i : i + context] for i in starts.tolist()])
        y = torch.stack([text[i + 1 : i + context + 1] for i in starts.tolist()])
        logits = model(x)
        loss = nn.functional.cross_entropy(logits.view(-1, vocab), y.view(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

    return lambda steps: _timed_steps(step, steps)


class _Policy(nn.Module):
    """pytorch/examples' REINFORCE policy: 4 observations -> 128 -> 2 action probabilities."""

    def __init__(self) -> None:
        super().__init__()
        self.affine1 = nn.Linear(4, 128)
        self.dropout = nn.Dropout(p=0.6)
        self.affine2 = nn.Linear(128, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.dropout(self.affine1(x)))
        return torch.softmax(self.affine2(x), dim=1)


def _cart_pole_step(state: list[float], action: int) -> list[float]:
    """One Euler step of the classic cart-pole dynamics, in Python as gym writes them."""
    x, x_dot, theta, theta_dot = state
    force = 10.0 if action == 1 else -10.0
    cos, sin = math.cos(theta), math.sin(theta)
    temp = (force + 0.05 * theta_dot**2 * sin) / 1.1
    theta_acc = (9.8 * sin - cos * temp) / (0.5 * (4.0 / 3.0 - 0.1 * cos**2 / 1.1))
    x_acc = temp - 0.05 * theta_acc * cos / 1.1
    return [x + 0.02 * x_dot, x_dot + 0.02 * x_acc, theta + 0.02 * theta_dot,
            theta_dot + 0.02 * theta_acc]  # fmt: skip


def make_rl_episode_loop(acting_steps: int = 50):
    """REINFORCE: `acting_steps` policy forwards (autograd on), one backward and one Adam step
    per episode; the cart is reset every episode so each has the same length."""
    torch.manual_seed(0)
    policy = _Policy()
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)

    def episode() -> None:
        state, log_probs, rewards = [0.01, 0.0, 0.02, 0.0], [], []
        for _ in range(acting_steps):
            probs = policy(torch.tensor(state).unsqueeze(0))
            action = torch.distributions.Categorical(probs).sample()
            log_probs.append(torch.log(probs[0, action]))
            state = _cart_pole_step(state, int(action))
            rewards.append(1.0 - abs(state[2]))
        # discounted returns, last step first, then in the episode's order
        returns = itertools.accumulate(reversed(rewards), lambda later, r: r + 0.99 * later)
        scaled = torch.tensor(list(returns)[::-1])
        scaled = (scaled - scaled.mean()) / (scaled.std() + 1e-6)
        loss = torch.cat([-lp * r for lp, r in zip(log_probs, scaled)]).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    return lambda steps: _timed_steps(episode, steps)


def make_prefetch_thread_loop(batch_size: int = 64, width: int = 256):
    """An MLP fed by a thread of the program's own that builds each batch in pure Python (a
    list of floats per sample, scaled and shifted, as a hand-written loader or an environment
    does), a queue between them: two Python threads busy at once, so the GIL changes hands at
    the switch interval, which the line sampler lowers for the whole process while it waits
    (diagnose/probes/lines.py)."""
    import queue
    import random
    import threading

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, width), nn.ReLU(), nn.Linear(width, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    batches: queue.Queue = queue.Queue(maxsize=4)
    rng = random.Random(0)

    def produce() -> None:
        while True:
            rows = [[rng.random() * 2.0 - 1.0 for _ in range(64)] for _ in range(batch_size)]
            batches.put((rows, [int(row[0] > 0) for row in rows]))

    threading.Thread(target=produce, daemon=True, name="prefetch").start()

    def step() -> None:
        rows, labels = batches.get()
        x, y = torch.tensor(rows), torch.tensor(labels)
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    return lambda steps: _timed_steps(step, steps)


LOOPS = {
    "mlp": lambda args: make_loop(args.batch_size, args.width),
    "lstm_cell_lbfgs": lambda args: make_lstm_cell_lbfgs_loop(16),
    "many_modules": lambda args: make_many_modules_loop(16),
    "transformer_lm": lambda args: make_transformer_lm_loop(16),
    "per_sample_dataset": lambda args: make_per_sample_loop(),
    "rl_episode": lambda args: make_rl_episode_loop(),
    "prefetch_thread": lambda args: make_prefetch_thread_loop(),
}
DESCRIPTIONS = {
    "mlp": "MLP 784-{width}-{width}-10, batch {batch_size}",
    "lstm_cell_lbfgs": "2 LSTMCells x 40 timesteps + LBFGS(max_iter=4) closure, batch 16",
    "many_modules": "64 blocks of Linear(32)+LayerNorm+GELU, AdamW, batch 16",
    "transformer_lm": "causal transformer LM, 2 layers x 64 wide, context 32, AdamW + clipping, batch 16",
    "per_sample_dataset": "MLP 784-500-10 on an MNIST-style dataset (int() of a label per sample), Adam, batch 100",
    "rl_episode": "REINFORCE on a Python cart-pole: 50 policy forwards (4-128-2) per episode, one backward and Adam step",
    "prefetch_thread": "MLP 64-256-10, batch 64, fed by a thread of its own building batches in pure Python",
}


def measure(run, args, line_samples: list[int]) -> dict[str, list[StepTimes]]:
    """Step times of each round per mode: plain, diagnosed, diagnosed without the line sampler.
    `line_samples` gets the line sampler's sample count of each diagnosed round."""
    run(args.warmup)  # warm the allocator and BLAS before either mode is timed

    def watched_round(line_profile: bool = True) -> StepTimes:
        w = torchdoctor.watch(warmup=args.warmup)
        w.config.line_profile = line_profile  # False: every probe but the line sampler
        with w:
            times = run(args.warmup + args.steps)[args.warmup :]
        assert len(w.report.run.steps) == args.steps, "the probes did not see every step"
        if line_profile:
            line_samples.append(w.report.run.lines.samples)
        return times

    return interleaved(
        {
            "plain": lambda: run(args.warmup + args.steps)[args.warmup :],
            "diagnose": watched_round,
            "no sampler": lambda: watched_round(line_profile=False),
        },
        args.rounds,
    )


def measure_per_probe(run, args) -> dict[str, list[StepTimes]]:
    """Step times of each round: plain, every probe but the line sampler ("probes"), and that
    set without each probe in turn ("-Name")."""
    run(args.warmup)

    def watched_round(without: tuple[str, ...] = ()) -> StepTimes:
        w = torchdoctor.watch(warmup=args.warmup, whatif=False)
        w.config.line_profile = False
        w.config.without_probes = without
        with w:
            return run(args.warmup + args.steps)[args.warmup :]

    modes = {
        "plain": lambda: run(args.warmup + args.steps)[args.warmup :],
        "probes": watched_round,
    }
    for probe_type in PROBE_TYPES:
        if probe_type is not LineSampler:
            name = probe_type.__name__
            modes[f"-{name}"] = lambda name=name: watched_round((name,))
    return interleaved(modes, args.rounds)


def report_per_probe(name: str, rounds: dict[str, list[StepTimes]], args) -> None:
    whole = paired_ratio(rounds["plain"], rounds["probes"], 1)
    print(
        f"{name}: every probe but the line sampler / plain, CPU: {whole.describe()}; "
        f"plain step {1000 * whole.base_s:.3f} ms; {args.rounds} rounds x {args.steps} steps"
    )
    print(f"  page faults per step, mean: {_faults_line(rounds)}")
    print("  cost of each probe (the set / the set without it), CPU, median [quartiles]:")
    costs = []
    for mode, times in rounds.items():
        if mode.startswith("-"):
            costs.append((paired_ratio(times, rounds["probes"], 1), mode[1:]))
    for cost, probe in sorted(costs, key=lambda c: -c[0].extra_s):
        print(f"    {probe:22s} {cost.describe()}")


def report(name: str, rounds: dict[str, list[StepTimes]], line_samples: list[int], args) -> None:
    description = DESCRIPTIONS[name].format(width=args.width, batch_size=args.batch_size)
    print(
        f"{name}: {description}, {args.threads} thread(s), "
        f"{args.rounds} rounds x {args.steps} steps per mode"
    )
    print(f"  {_headline(rounds)}")
    print_ratios("plain", "diagnose", rounds["plain"], rounds["diagnose"])
    print(f"  {_mean_line(rounds)}")
    fastest_plain = min(t[1] for steps in rounds["plain"] for t in steps)
    fastest_watched = min(t[1] for steps in rounds["diagnose"] for t in steps)
    print(
        f"  best: plain {1000 * fastest_plain:.3f} ms, diagnose {1000 * fastest_watched:.3f} ms, "
        f"ratio diagnosed/plain {fastest_watched / fastest_plain:.3f} "
        f"(+{1e6 * (fastest_watched - fastest_plain):.0f} us per step); fastest step of each "
        "mode, CPU time (the least disturbed by other jobs)"
    )
    print(f"  page faults per step, mean: {_faults_line(rounds)}")
    # not the overhead: both sides are diagnosed (round 12's re-measure read this block's
    # ratio, 1.02-1.05, as rl_episode's diagnosed/plain, which was 1.27-1.33)
    print(
        "  the line sampler's share only, NOT diagnose/plain (diagnose vs diagnose without the "
        f"sampler; {statistics.median(line_samples):.0f} samples per round, median):"
    )
    print_ratios(
        "diagnose-without-sampler", "diagnose", rounds["no sampler"], rounds["diagnose"],
        indent="    ",
    )  # fmt: skip


def _headline(rounds: dict[str, list[StepTimes]]) -> str:
    """The overhead, diagnosed/plain steady-state step time on the main thread's CPU (the
    target's number, <= 1.05), read three ways that agree when the runs are undisturbed: the
    median of the paired rounds' ratios (each round's median step), the mean step over all rounds
    (rare long steps included), the fastest step of each mode."""
    paired = paired_ratio(rounds["plain"], rounds["diagnose"], 1)
    plain, watched = (
        [t[1] for steps in rounds[mode] for t in steps] for mode in ("plain", "diagnose")
    )
    mean = statistics.fmean(watched) / statistics.fmean(plain)
    fastest = min(watched) / min(plain)
    return (
        f"OVERHEAD diagnose/plain, step CPU time: paired median {paired.ratio:.3f} "
        f"[{paired.low:.3f}-{paired.high:.3f}], mean step {mean:.3f}, fastest step {fastest:.3f}"
    )


def _mean_line(rounds: dict[str, list[StepTimes]]) -> str:
    """The mean step of all rounds, not a median: what a run of many steps costs in all, the
    rare long steps included (a full garbage collection, which objects the probes keep bring
    about every few hundred steps), which the medians and the fastest step leave out. Not paired
    round by round: a burst of load in one round moves it."""
    plain, watched = (
        statistics.fmean(t[1] for steps in rounds[mode] for t in steps)
        for mode in ("plain", "diagnose")
    )
    return (
        f"mean step over all rounds, CPU: plain {1000 * plain:.3f} ms, diagnose "
        f"{1000 * watched:.3f} ms, ratio {watched / plain:.3f} (+{1e6 * (watched - plain):.0f} us)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--steps", type=int, default=30, help="timed steps per round")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=128, help="mlp row")
    parser.add_argument("--width", type=int, default=512, help="mlp row")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    parser.add_argument("--loops", default=",".join(LOOPS), help="rows, comma-separated")
    parser.add_argument(
        "--per-probe", action="store_true", help="each probe's cost, one left out at a time"
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    for name in args.loops.split(","):
        if name not in LOOPS:
            parser.error(f"unknown loop {name!r}; choose from {', '.join(LOOPS)}")
        if args.per_probe:
            report_per_probe(name, measure_per_probe(LOOPS[name](args), args), args)
            continue
        line_samples: list[int] = []
        report(name, measure(LOOPS[name](args), args, line_samples), line_samples, args)


if __name__ == "__main__":
    main()
