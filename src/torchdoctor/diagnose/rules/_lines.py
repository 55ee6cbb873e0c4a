"""Shared questions about the line profile (`run.lines`): which of the user's lines are hot outside
the model's own compute, and what each one is doing. Pure: reads the observation only.

A line is *hot* when its time per step, sampled in the phases the model's forward and backward,
the optimizer and data loading do not own ("other", and evaluation outside the model call), is a
large share of the mean step. What it does is read from its source text, the loop around it and
the library functions it was seen calling, never from the script's names: the same verdict has to
hold for code written in any style.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass, replace

from torchdoctor.diagnose.findings import Severity
from torchdoctor.diagnose.observations import LineStat, RunObservation
from torchdoctor.diagnose.rules._common import severity_for
from torchdoctor.diagnose.step_analysis import acts_in_the_loop as acts_in_the_loop
from torchdoctor.diagnose.step_analysis import evaluation_is_validation as evaluation_is_validation

# Phases whose time a user line can own. Forward/backward/optimizer are the model's compute; data
# and h2d are the D1xx rules', but for a wait on a queue the program's own producer fills (booked
# as data by the queue probe; no DataLoader rule speaks of it). In "evaluation", the model call
# itself is D304's.
LINE_PHASES = ("other", "data", "evaluation")
DATA_PHASE_KINDS = ("queue_wait",)
MODEL_CALL_SHARE = 0.5  # an evaluation line mostly inside the model's forward is the model call
# What a line called that makes its time model compute (a loss or module call, autograd, optim)
# or data loading (a DataLoader's iterator starting or shutting down workers: the D1xx rules')
MODEL_CALLEES = (
    "torch.utils.data.",
    "torch.nn.modules.module.Module._wrapped_call_impl",
    "torch.nn.modules.module.Module._call_impl",
    "torch.nn.functional.",
    "torch.nn.modules.loss.",
    "torch.autograd.",
    "torch._tensor.Tensor.backward",
    "torch.optim.",
    "torch.utils.checkpoint.",
    "torch.nn.utils.",  # clip_grad_norm_ and friends: fused over the gradients
    "torch.amp.",  # GradScaler.scale / update
    # a policy's distribution (sample, log_prob, entropy over a batch of logits): the model's
    # math, like a loss; an RL rollout needs it at every environment step
    "torch.distributions.",
)
# kinds whose own time on a line that also holds training compute is glue around it
ENCLOSING_KINDS = ("python", "package")
# kinds named only within the training step: in evaluation such work is D304's (its time)
IN_STEP_ONLY = ("python", "from_python")
MIN_SAMPLES = 3  # fewer samples are too few to name a line
# fewer samples in all (a few short steps) make every share noise: no line is named then
MIN_RUN_SAMPLES = 20


@dataclass(frozen=True)
class LineKind:
    name: str  # stable key, e.g. "deepcopy"
    what: str  # what the line does, in words
    fix: str  # the change, as code or a sentence
    # the line's work can run less often (every N steps) or leave the step: its sampled time is
    # what the fix gives back (basis "measured"); otherwise an estimate
    removable: bool


KINDS = {
    "model_copy": LineKind(
        "model_copy",
        "copies the whole model or its state dict (every parameter and buffer)",
        "# keep one copy and update it in place (EMA), or copy only when it is needed:\n"
        "with torch.no_grad():\n"
        "    for p_ema, p in zip(ema.parameters(), model.parameters()):\n"
        "        p_ema.lerp_(p, 1 - decay)  # or torch._foreach_lerp_ on the two lists",
        True,
    ),
    "deepcopy": LineKind(
        "deepcopy",
        "deep-copies an object (copy.deepcopy walks and copies it whole)",
        "copy only what changes, or copy every N steps instead of every step",
        True,
    ),
    "io": LineKind(
        "io",
        "reads or writes a file (open/json/pickle/csv)",
        "write every N steps, or hand records to a background thread / buffered writer",
        True,
    ),
    "format": LineKind(
        "format",
        "turns tensors into text (print, f-string, repr, logging)",
        "if step % 10 == 0:\n    print(...)  # format scalars (loss.item()), not whole tensors",
        True,
    ),
    "host": LineKind(
        "host",
        "copies tensors to the host (.cpu()/.numpy()/.tolist()/.item()) for Python or NumPy work",
        "compute the metric with torch ops on the tensors (no host copy), accumulate it on the "
        "device, and read it every N steps",
        True,
    ),
    # a host read inside an RL loop's acting (evaluation forwards of the policy on what the
    # environment returned): the environment needs the action on the host at every step
    "acting": LineKind(
        "acting",
        "turns the policy's output into an action for the environment on the host "
        "(.item()/.tolist()/.numpy()), which the environment needs at every step",
        "# act for many environments per forward: one forward and one host read serve N actions\n"
        "envs = gymnasium.vector.SyncVectorEnv([make_env] * 8)  # or a batch of your own envs\n"
        "action = Categorical(logits=policy(obs), validate_args=False).sample().tolist()",
        False,
    ),
    # a batch taken from a queue that a producer thread or process fills (a prefetch thread): the
    # step waits for data the program prepares itself, outside any DataLoader
    "queue_wait": LineKind(
        "queue_wait",
        "waits for the next item of a queue that another thread or process fills (the producer "
        "is slower than the training step: the step waits for its data)",
        "# prepare batches in more processes than one producer: a DataLoader does it\n"
        "loader = DataLoader(dataset, batch_size=..., num_workers=4, persistent_workers=True)\n"
        "# or start more producer threads/processes on the same queue (if its work releases the "
        "GIL)",
        False,
    ),
    # tqdm's set_postfix/set_description redraw the bar at every call (refresh=True by default),
    # past the mininterval that throttles update(): the drawing is the line's time, whatever
    # the values shown (a loss.item() in the call is read either way)
    "progress_bar": LineKind(
        "progress_bar",
        "redraws the progress bar at every call (tqdm's set_postfix and set_description refresh "
        "the display by default, past the mininterval that throttles update())",
        "progress_bar.set_postfix(loss=loss_value, refresh=False)  # drawn by the next update()\n"
        "# within tqdm's mininterval (0.1 s), not at every step",
        True,
    ),
    # a reinforcement-learning environment's own step (its simulation): the program's work, not
    # overhead around training; D801 does not flag it
    "environment": LineKind(
        "environment",
        "steps the reinforcement-learning environment (its own simulation)",
        "step several environments at once in worker processes (gymnasium.vector.AsyncVectorEnv) "
        "when one environment step is expensive",
        False,
    ),
    # NumPy work seen only in what the line called (no host read in its text): a replay
    # buffer's sampling from NumPy arrays, not a tensor copied out of the model
    "numpy": LineKind(
        "numpy",
        "works on NumPy arrays on the host (indexing, random numbers, conversions)",
        "keep the data as torch tensors (on the training device) and index or sample them with "
        "torch ops (torch.randint, tensor[idx]) instead of NumPy",
        False,
    ),
    # the line's time is inside an installed package's function it called (PyG's recon_loss
    # sampling negative edges on the host): the package's work, which the program chose
    "package": LineKind(
        "package",
        "runs an installed package's code outside the model's forward and backward (what it "
        "called is listed below)",
        "see whether the package has a faster path for this call (a vectorised or on-device "
        "option), or call it less often where its result can wait",
        False,
    ),
    "parameter_loop": LineKind(
        "parameter_loop",
        "runs a Python loop over the parameters (one small op per tensor)",
        "params = [p for p in model.parameters()]\n"
        "torch._foreach_mul_(params, 0.999)  # one fused call over the list, no Python loop",
        False,
    ),
    "sample_loop": LineKind(
        "sample_loop",
        "runs a Python loop over the samples of a batch (one small op per sample)",
        "vectorise: apply the operation to the whole batch tensor at once",
        False,
    ),
    "model_call": LineKind(
        "model_call",
        "calls the model again in every step (a forward whose output gets no gradient)",
        "logits = model(x)\nloss = loss_fn(logits, y)\n"
        "accuracy = (logits.detach().argmax(1) == y).float().mean()  # reuse the training forward",
        True,
    ),
    "backward": LineKind(
        "backward",
        "runs another backward pass",
        "sum the losses and call backward() once",
        False,
    ),
    # `seen = torch.cat([seen, x])`: every step copies all that came before (D504's growth, named
    # by its line)
    "growing_cat": LineKind(
        "growing_cat",
        "concatenates onto its own result, so every step copies everything kept so far",
        "chunks.append(x.detach())  # O(1) per step\n"
        "seen = torch.cat(chunks)  # once, when the whole history is needed",
        False,
    ),
    # torch.tensor on Python data built in the step (a list of pairs, of ints): every element
    # is read by the interpreter (D106 has lists of NumPy arrays, from its probe)
    "from_python": LineKind(
        "from_python",
        "builds a tensor from Python data (torch.tensor on a list: element by element)",
        "build the tensor with torch ops on tensors (torch.randint, torch.stack, indexing) "
        "instead of Python lists",
        False,
    ),
    "python": LineKind(
        "python",
        "runs the program's own code outside the model's forward and backward",
        "run it less often, move it off the training step, or vectorise it",
        False,
    ),
}

_HOST = re.compile(r"\.(cpu|numpy|tolist|item)\(\s*\)")
_IO = re.compile(r"\bopen\(|\.write\(|\bjson\.|\bpickle\.|\bnp\.save|\bcsv\.|\.to_csv\(")
_FORMAT = re.compile(r"\bprint\(|\blog(ger|ging)?\.(info|debug|warning)\(|\brepr\(|\bstr\(")
_PARAMS = re.compile(r"\.(named_)?(parameters|buffers|modules)\(\)|state_dict\(\)\.(items|values)")
_SAMPLES = re.compile(r"\brange\(\s*(len\(|[\w.]+\.(size\(|shape\[))")
_GROWING_CAT = re.compile(
    r"([\w.]+)\s*=\s*torch\.(cat|concat|concatenate|stack|vstack|hstack)\(\s*[\[(]\s*\1\b"
)
_FROM_PYTHON = re.compile(r"\btorch\.(tensor|as_tensor|(Long|Float|Int|Bool)?Tensor)\(")
_BACKWARD = re.compile(r"\.backward\(|autograd\.grad\(")
_IO_CALLEES = ("json.", "pickle.", "csv.", "io.", "_io.", "codecs.", "numpy.lib.npyio", "shutil")
_FORMAT_CALLEES = ("torch._tensor_str", "torch._tensor.Tensor.__repr__", "logging.")
_CHECKPOINT_CALLEES = ("torch.serialization.save",)
# a blocking get from a queue another thread or process fills (the line's own call)
_QUEUE_GETS = ("queue.Queue.get", "multiprocessing.queues.")
# progress-bar calls that redraw the bar by default (tqdm.auto's and tqdm.rich's classes inherit
# them from tqdm.std): the line's own call, its first callee
_PROGRESS_REDRAWS = tuple(
    f"tqdm.std.tqdm.{name}"
    for name in ("set_postfix", "set_postfix_str", "set_description", "set_description_str")
)
_ENVIRONMENT_CALLEES = ("gymnasium.", "gym.", "pettingzoo.", "envpool.", "dm_control.")
_NOT_PACKAGES = ("torch", "numpy", "torchdoctor", "builtins")
_MODEL_COPY_CALLEES = (
    "torch.nn.modules.module.Module.state_dict",
    "torch.nn.modules.module.Module.load_state_dict",
)


def _calls(line: LineStat, prefixes: tuple[str, ...]) -> bool:
    return any(callee.startswith(prefixes) for callee in line.callees)


def _in_a_package(line: LineStat) -> bool:
    """The line itself called a function of an installed package (neither torch, NumPy nor the
    standard library)."""
    if not line.callees:
        return False
    top = line.callees[0].split(".", 1)[0]
    return not (top.startswith("<") or top in _NOT_PACKAGES or top in sys.stdlib_module_names)


def kind_of(line: LineStat) -> LineKind:
    """What the line does, from its callees first (what really ran), then its text and loop."""
    code = line.code
    if _calls(line, _CHECKPOINT_CALLEES):
        # torch.save(model.state_dict(), path) calls state_dict but copies nothing: it writes a
        # checkpoint (D701's, which measures the saves themselves)
        return KINDS["io"]
    if _calls(line, _ENVIRONMENT_CALLEES):
        return KINDS["environment"]
    deep = _calls(line, ("copy.deepcopy",)) or "deepcopy(" in code
    # a deep copy that went through torch's tensor copies copies a model or its state
    if _calls(line, _MODEL_COPY_CALLEES) or (
        deep and (_calls(line, ("torch.",)) or "state_dict" in code)
    ):
        return KINDS["model_copy"]
    if deep:
        return KINDS["deepcopy"]
    if _BACKWARD.search(code):
        return KINDS["backward"]
    if line.callees and line.callees[0].startswith(_QUEUE_GETS):
        return KINDS["queue_wait"]
    if line.callees and line.callees[0].startswith(_PROGRESS_REDRAWS):
        return KINDS["progress_bar"]
    if _calls(line, _FORMAT_CALLEES) or _FORMAT.search(code):
        return KINDS["format"]
    if _calls(line, _IO_CALLEES) or _IO.search(code):
        return KINDS["io"]
    # a package's call per parameter (wandb.Histogram of each weight) is the package's work, which
    # runs less often rather than fused over the tensors
    in_a_package = _in_a_package(line)
    if _PARAMS.search(line.loop) or (" for " in f" {code}" and _PARAMS.search(code)):
        return KINDS["package" if in_a_package else "parameter_loop"]
    if _HOST.search(code):
        return KINDS["host"]
    if in_a_package:
        return KINDS["package"]
    if _calls(line, ("numpy.",)):
        return KINDS["numpy"]
    if line.loop and _SAMPLES.search(line.loop):
        return KINDS["sample_loop"]
    if _GROWING_CAT.search(code):
        return KINDS["growing_cat"]
    if _FROM_PYTHON.search(code):
        return KINDS["from_python"]
    return KINDS["python"]


def yields(line: LineStat) -> bool:
    """A generator handing the loop its batch (`yield x[idx], y[idx]`) with no recognised work
    on the line: the program's data loading without a DataLoader, not overhead around it."""
    return line.code.startswith("yield") and kind_of(line).name == "python"


def is_model_compute(line: LineStat) -> bool:
    """The line's time is the model's or the loss's compute, not a hot spot of its own."""
    if line.callees and line.callees[0].startswith(MODEL_CALLEES):
        return True
    if _calls(line, ("torch.utils.data.",)):
        return True
    return line.phase == "evaluation" and line.model_share >= MODEL_CALL_SHARE


@dataclass(frozen=True)
class HotLine:
    line: LineStat
    kind: LineKind
    share: float  # of the mean step: self time, or the whole call for a call site
    call_site: bool  # the time is spread over the lines of a function the line calls
    inner: tuple[LineStat, ...] = ()  # a call site's hottest inner lines


def samples_of(hot: HotLine) -> int:
    """The samples a hot spot's share stands on: the call's, or its lines' own."""
    if hot.call_site:
        return hot.line.samples
    return hot.line.self_samples + sum(inner.self_samples for inner in hot.inner)


def sampled_severity(saving: float, samples: int) -> Severity:
    """A sampled line's severity from its saving less two standard deviations of a count of
    `samples` (Poisson, about 2 x its square root; a lower bound 19 times in 20): a few samples'
    share is mostly chance (one stalled write holding the thread on a busy machine), so a
    warning needs enough of them (at 5 samples, 89% less; at 100, 20% less)."""
    return severity_for(saving * max(0.0, 1 - 2 / math.sqrt(samples)) if samples > 0 else 0.0)


def _loop_hot_spots(lines: list[LineStat], min_share: float) -> list[HotLine]:
    """Loops within the step whose lines add up to `min_share`: one hot spot each, named by its
    hottest line (a loop's time is spread over its lines, none of which may be hot). The loop's
    header counts with its body: `while len(pairs) < n:` runs once an iteration too."""
    groups: dict[tuple, list[LineStat]] = {}
    for line in lines:
        if line.loop and line.self_samples and not is_model_compute(line) and not yields(line):
            key = (line.phase, line.location.rsplit(":", 1)[0], line.function, line.loop)
            groups.setdefault(key, []).append(line)
    for line in lines:
        header = (line.phase, line.location.rsplit(":", 1)[0], line.function, line.code)
        if header in groups and line.self_samples and not is_model_compute(line):
            groups[header].append(line)
    found = []
    for body in groups.values():
        if len(body) < 2:
            continue
        share = sum(line.self_share for line in body)
        if share < min_share or sum(line.self_samples for line in body) < MIN_SAMPLES:
            continue
        body.sort(key=lambda line: -line.self_share)
        kinds = [kind_of(line) for line in body]
        kind = next((k for k in kinds if k.name != "python"), kinds[0])
        found.append(HotLine(body[0], kind, share, False, tuple(body[1:4])))
    return found


def _call_sites(lines: list[LineStat], min_share: float) -> list[HotLine]:
    """Calls of user functions (not the training loop's) whose whole time, the lines inside
    included, reaches `min_share`: a helper computing a metric is one hot spot, not five."""
    found: list[HotLine] = []
    covered: set[str] = set()
    for line in sorted(lines, key=lambda line: -line.share):
        if line.encloses_training or line.share < min_share or line.location in covered:
            continue
        if is_model_compute(line) or line.samples - line.self_samples < MIN_SAMPLES:
            continue  # not a call that spreads its time over the lines of a user function
        inner = sorted(
            (
                other
                for other in lines
                if other.phase == line.phase
                and other is not line
                and other.self_samples > 0
                and any(c.startswith(line.location + " ") for c in other.chain)
            ),
            key=lambda other: -other.self_share,
        )
        if inner and is_model_compute(inner[0]):
            continue
        if inner and all(yields(other) for other in inner):
            continue  # `for x, y in batches():` running a generator that slices the batch
        kinds = [kind_of(other) for other in (line, *inner)]
        kind = next((k for k in kinds if k.name != "python"), kinds[0])
        found.append(HotLine(line, kind, line.share, True, tuple(inner[:3])))
        # the calls it makes on the way (a dispatcher's `fn(state)`) are the same time
        below = (o for o in lines if any(c.startswith(line.location + " ") for c in o.chain))
        covered |= {line.location, *(other.location for other in below)}
    return found


def hot_lines(run: RunObservation, min_share: float) -> list[HotLine]:
    """User lines outside the model's compute taking at least `min_share` of the mean step,
    largest first: calls of user functions (with the lines inside), loops within the step (their
    lines together), then single lines (self time). Each line is named once. Evaluation's own
    work (a metric over the validation batches) counts only when recognisable (D304 has it)."""
    found: list[HotLine] = []
    if run.lines.samples < MIN_RUN_SAMPLES:
        return found
    for phase in LINE_PHASES:
        lines = [line for line in run.lines.lines if line.phase == phase]
        spots = _call_sites(lines, min_share)
        taken = {line.location for h in spots for line in (h.line, *h.inner)}
        rest = [line for line in lines if line.location not in taken]
        spots += _loop_hot_spots(rest, min_share)
        taken |= {line.location for h in spots for line in (h.line, *h.inner)}
        for line in rest:
            if line.location in taken or is_model_compute(line) or yields(line):
                continue
            if line.self_share >= min_share and line.self_samples >= MIN_SAMPLES:
                kind = kind_of(line)
                # a line that calls the model (loss = loss_fn(model(x[idx]), y)): its own
                # time is the glue around training (indexing, the loss), not a hot spot; nor
                # is a package's that runs training (Lightning's `trainer.fit`) or a loss
                # beside a module's forward (PyG's `recon_loss`): the package's own loop
                if kind.name not in ENCLOSING_KINDS or not line.encloses_training:
                    spots.append(HotLine(line, kind, line.self_share, False))
        if phase == "data":
            spots = [h for h in spots if h.kind.name in DATA_PHASE_KINDS]
        found += [h for h in spots if phase != "evaluation" or h.kind.name not in IN_STEP_ONLY]
    if acts_in_the_loop(run):  # no metric to accumulate on the device: the action is needed
        found = [_as_acting(h) for h in found]
    return sorted(found, key=lambda h: -h.share)


def _as_acting(hot: HotLine) -> HotLine:
    if hot.line.phase == "evaluation" and hot.kind.name == "host":
        return replace(hot, kind=KINDS["acting"])
    return hot


def lines_in_phase(run: RunObservation, phase: str) -> list[LineStat]:
    """The phase's lines with time of their own, the largest first."""
    found = [line for line in run.lines.lines if line.phase == phase and line.self_samples]
    return sorted(found, key=lambda line: -line.self_share)


# words of a function's name that say it validates (evaluate_policy, validation_step, run_test,
# evalModel): the vocabulary of validation in every framework (Keras evaluate, Lightning
# validation_step, SB3 evaluate_policy); acting is collect/rollout/act/select_action
_VALIDATION_WORDS = frozenset({"eval", "evaluate", "evaluation", "val", "valid", "validate",
                               "validation", "test"})  # fmt: skip
_NAME_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def _names_validation(function: str) -> bool:
    return any(word.lower() in _VALIDATION_WORDS for word in _NAME_WORD.findall(function))


def evaluation_called_as_validation(run: RunObservation) -> bool:
    """Most of the evaluation time the line sampler saw was inside a function the program names
    as validation (its own line's or a caller's on the chain): an RL loop's greedy evaluation
    episodes run in train mode and without a loader, like its acting, and only the program's own
    words tell them apart. Not forwards on the batch a training forward just saw: a second
    forward for a metric, whatever its function is called, is D801's."""
    if (run.evaluation.on_training_batches or 0) * 2 >= run.evaluation.forwards:
        return False
    lines = lines_in_phase(run, "evaluation")
    total = sum(line.self_samples for line in lines)
    if total < MIN_SAMPLES or run.lines.samples < MIN_RUN_SAMPLES:
        return False
    named = sum(
        line.self_samples
        for line in lines
        if any(
            _names_validation(function)
            for function in [line.function, *(c.rpartition(" in ")[2] for c in line.chain)]
        )
    )
    return named * 2 > total


def repeated_model_calls(run: RunObservation, min_share: float, every: float) -> list[HotLine]:
    """Model calls whose output never gets a gradient, made in at least `every` of the steps
    outside validation (a second forward for a metric): evaluation lines inside the model."""
    steps = [s for s in run.steps if s.wall_s > 0]
    if not steps or evaluation_is_validation(run) or run.lines.samples < MIN_RUN_SAMPLES:
        return []
    if sum(1 for s in steps if s.evaluation_s > 0) < every * len(steps):
        return []
    if acts_in_the_loop(run):
        return []  # acting forwards, a target network: nothing the training forward computed
    return [
        HotLine(line, KINDS["model_call"], line.self_share, False)
        for line in lines_in_phase(run, "evaluation")
        if line.model_share >= MODEL_CALL_SHARE
        and line.self_share >= min_share
        and line.self_samples >= MIN_SAMPLES
    ]
