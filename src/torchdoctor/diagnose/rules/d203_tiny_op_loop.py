"""D203: a Python loop issues many tiny ops per step.

## What it does
Flags steps that dispatch at least three times the ops the model's size explains (about 40 per
parameter tensor plus 200) when those ops are trivially small: the mean op takes at most 10 times
what dispatching one trivial op costs on the same machine (measured).

Only the torch calls the program itself issues from Python count as the loop: when the ops
come from inside one call (an `nn.GRU`/`nn.LSTM`/`nn.RNN` on CPU runs each time step as several
small ATen ops in C++), fewer Python calls than the model's expected ops were made, and there is
no Python loop to vectorise; the rule stays silent (on a GPU, cuDNN fuses those modules).
Ops run inside evaluation cut out of the step (validation, an RL loop's acting forwards under
`no_grad`) are left out like the step's time. When the model itself is called many times with
autograd on per `backward()` (an RL rollout acting one environment step at a time, REINFORCE
style), the finding says so and suggests one batched forward over the rollout. When each of
those calls takes a batch of rows (a rollout over vectorised environments, a meta-learning inner
loop on a task's support set), the model's own forward and backward ops are counted once per
call: they are the model's work, and batching across time steps or inner steps is not possible
(each call depends on the one before).

## Why is this bad
Every op pays a fixed cost (Python, the dispatcher, a kernel launch on a GPU) of microseconds. A
loop over samples, time steps or elements that indexes and updates tensors one small piece at a
time turns one vectorised op into thousands, and the step becomes pure overhead.

Estimated saving: the fixed cost of the ops beyond what the model explains, each at the
machine's measured dispatch floor (a trivial op), as a share of the median step, at most nine
tenths of the step's time outside data loading and copies (where those ops run). Batched, they
become a handful of ops that still do the same arithmetic: only the per-op fixed cost goes away,
never the whole step (a loop over time steps may not batch at all: then `torch.compile` or a
fused module such as `nn.LSTM` removes part of it). On a CPU run the step and
op times are scaled by the share of wall time the training thread had a CPU (`cpu_share`), so
another process's load does not hide or create the finding; runs whose ops were not counted
(torch.compile) are not judged.

## Example
```python
loss = 0
for i in range(x.shape[0]):
    loss = loss + (model(x[i : i + 1]) - y[i]).pow(2).sum()
```

## Use instead
```python
loss = (model(x) - y).pow(2).sum()  # one batched op; or torch.vmap / torch.compile
```

## Fix safety
Needs review: the batched form must compute the same thing (watch reductions and broadcasting);
`torch.compile` keeps the semantics but adds compile time.
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import (
    clamp,
    expected_ops,
    measured_steps,
    median,
    model_time_s,
    parameter_tensors,
    pct,
    secs,
    severity_for,
    step_profile,
    typical_step_s,
)
from torchdoctor.diagnose.rules._overhead import cpu_share, op_overhead

CODE = "D203"
# root forwards with autograd per backward() from which the model is called once per sample or
# per environment step (a normal step: 1; a GAN or a siamese pair: 2-3)
MANY_FORWARDS = 8
TITLE = "Python loop of tiny ops: the step is dominated by per-op overhead"
MIN_OPS_TO_EXPECTED = 3.0
MAX_GIVEN_BACK = 0.9  # of the model's part of the step: the batched ops still cost something
# a forward on at least this many rows is a batch (of environments, of a task's samples), not one
# sample of a loop that batching would merge
MIN_BATCH_ROWS = 8
# of expected_ops' 40 per parameter tensor, the forward's and backward's part: it repeats with
# every forward, the optimizer's part does not
OPS_PER_PASS_PER_TENSOR = 30


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    if profile is None or run.environment.anomaly_detection:
        return []  # anomaly mode's own checks multiply the ops (80 -> 2396 per step): D211's
    # CPU seconds of the step: comparable with the per-op floor on a busy machine too
    step_s = typical_step_s(run) * cpu_share(run)
    overhead = op_overhead(run, model_time_s(run))
    forwards = forwards_per_backward(run)
    rows = forward_rows(run)
    batched_calls = forwards > 1 and rows is not None and rows >= MIN_BATCH_ROWS
    expected = expected_ops(run)
    if batched_calls:  # each batched call runs the model's own ops
        expected += (forwards - 1) * OPS_PER_PASS_PER_TENSOR * parameter_tensors(run)
    if overhead is None or not overhead.trivial:
        return []
    if overhead.ops_per_step < MIN_OPS_TO_EXPECTED * expected:
        return []
    python_calls = run.compute.python_calls_per_step
    if python_calls is not None:  # calls made while evaluating or acting are not the step's
        python_calls -= run.compute.evaluation_python_calls_per_step or 0.0
    if python_calls is not None and python_calls < expected:
        return []  # the ops come from inside a few calls (a recurrent module), not a Python loop
    # only the fixed cost per op goes away; the arithmetic stays (never "saves 100%"). That cost
    # is at most what an op took: a trivial-op floor timed on a busy machine can exceed the
    # program's mean op (REINFORCE: 27.7 us floor, 17.6 us mean op, "saves 100%")
    per_op_s = min(overhead.dispatch_s, overhead.mean_op_s)
    excess_s = (overhead.ops_per_step - expected) * per_op_s
    # never more than a share of the model's part of the step (outside data and copies), where
    # the ops run: batched ops still dispatch and compute
    model_s = model_time_s(run) * cpu_share(run)
    cap = MAX_GIVEN_BACK * clamp(model_s / step_s) if step_s > 0 else 0.0
    saving = min(clamp(excess_s / step_s) if step_s > 0 else 0.0, cap)
    evidence = [
        f"{overhead.ops_per_step:.0f} ops per step, {overhead.ops_per_step / expected:.0f}x the "
        f"about {expected:.0f} that a model with {parameter_tensors(run)} parameter tensors needs.",
        *(
            [f"The program issued {python_calls:.0f} torch calls per step from Python."]
            if python_calls is not None
            else []
        ),
        f"The mean op took {secs(overhead.mean_op_s)}, against {secs(overhead.dispatch_s)} for a "
        "trivial op on this machine: the ops do almost no arithmetic.",
        f"The fixed cost of the ops beyond the model's is about {secs(excess_s)}: {pct(saving)} of "
        f"the {secs(step_s)} step (CPU time of the training thread), the part batching removes.",
    ]
    fix = (
        "# replace the per-element/per-sample Python loop with one batched op, e.g.\n"
        "out = model(x)                 # not: [model(x[i:i+1]) for i in range(len(x))]\n"
        "total = values.sum()           # not: sum(values[i] for i in range(n))\n"
        "# or: step = torch.compile(step)"
    )
    if batched_calls:
        evidence.insert(
            0,
            f"The step called the model {forwards:.0f} times per backward() on batches of about "
            f"{rows} rows: the expected ops count the model's forward and backward that often.",
        )
    elif forwards >= MANY_FORWARDS:
        evidence.insert(
            0,
            f"The step called the model {forwards:.0f} times with autograd on per backward(): "
            "one small input per call (an RL rollout acting one environment step at a time, or "
            "a loop over samples), each with its own ops.",
        )
        fix = (
            "# call the model once on a batch: keep the observations (samples) of the rollout,\n"
            "# act under torch.no_grad(), and recompute log-probs/values in one forward:\n"
            "logits, values = model(torch.stack(observations))\n"
            "# and step several environments at once (gymnasium.vector.SyncVectorEnv)"
        )
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving),
            saving=saving,
            evidence=evidence,
            fix=fix,
            source="docs/techniques/vectorize-python-loops.md",
            explanation="Each tiny op pays microseconds of fixed cost; one batched op pays it "
            "once.",
            details={
                "ops_per_step": overhead.ops_per_step,
                "expected_ops": expected,
                "mean_op_s": overhead.mean_op_s,
                "dispatch_s": overhead.dispatch_s,
                "python_calls_per_step": python_calls,
            },
            saving_how="estimate: the extra ops' fixed cost at the measured trivial-op floor, at "
            "most 90% of the model's part of the step",
        )
    ]


def forward_rows(run: RunObservation) -> int | None:
    """Median rows per training forward over the measured steps (None: not seen)."""
    rows = [float(s.training_forward_rows or 0) for s in measured_steps(run)]
    rows = [r for r in rows if r > 0]
    return int(median(rows)) if rows else None


def forwards_per_backward(run: RunObservation) -> float:
    """Median root forwards with autograd per backward() over the measured steps (0: unknown)."""
    counts = [s.training_forwards / s.micro_batches for s in measured_steps(run)]
    return median(counts) if counts else 0.0
