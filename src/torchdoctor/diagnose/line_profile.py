"""Raw stack samples -> the phase-aware line profile (`run.lines`). Pure: no torch.

Each sample stands for the time since the sample before it (capped at MAX_GAP_INTERVALS of the
interval the sampler waited before it), so a sampler delayed by a busy machine or a long-held
GIL, or one that slowed down on a long run, still adds up to the measured time; the total is then
scaled to the measured steps' clock time. A sample inside an evaluation window (cut out of the steps by the
tracker) is booked to the phase "evaluation".
"""

from __future__ import annotations

import ast
import bisect
import linecache
import os
import sys
from collections import Counter, defaultdict
from functools import lru_cache

from torchdoctor.diagnose.observations import LinesObservation, LineStat
from torchdoctor.diagnose.source_lines import short_path

# (clock time, tracker phase, user frames innermost first as (code, line), library code objects
# from the innermost user line's callee inwards, seconds the sampler waited before it)
RawSample = tuple
EVALUATION = "evaluation"
OURS = "torchdoctor"  # samples taken while torchdoctor closed a step: in no line's time
TRAINING_PHASES = ("data", "h2d", "forward", "backward", "optimizer")
MAX_GAP_INTERVALS = 10  # a sample stands for at most this many intervals of time
TOP_PER_PHASE = 8  # lines kept per phase by self samples (and as many again by inclusive ones)
CONTEXT_LINES = 2  # source lines shown on each side of a line (HTML)


@lru_cache(maxsize=4096)
def module_name(filename: str) -> str:
    """'copy', 'json', 'torch.nn.modules.module' for a library file (its longest sys.path root)."""
    roots = [p for p in sys.path if p and filename.startswith(os.path.join(p, ""))]
    if not roots:
        return os.path.splitext(os.path.basename(filename))[0]
    rel = os.path.relpath(filename, max(roots, key=len))
    name = os.path.splitext(rel)[0].replace(os.sep, ".")
    return name[: -len(".__init__")] if name.endswith(".__init__") else name


def callee_name(code) -> str:
    qualname = getattr(code, "co_qualname", code.co_name)
    return f"{module_name(code.co_filename)}.{qualname}"


@lru_cache(maxsize=256)
def _loops(filename: str) -> tuple[tuple[int, int, int], ...]:
    """(first line, last line, header line) of every for/while loop in a source file."""
    try:
        tree = ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return ()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)) and node.end_lineno:
            found.append((node.lineno, node.end_lineno, node.lineno))
    return tuple(found)


def enclosing_loop(filename: str, line: int, training_lines: set[int]) -> str:
    """Header of the innermost loop around `line` that runs within a step: a loop that also
    holds a line seen in training compute or data loading is the training loop, not one."""
    inner = [
        (first, last, header)
        for first, last, header in _loops(filename)
        if first <= line <= last and first != line
        and not any(first <= t <= last for t in training_lines)
    ]  # fmt: skip
    if not inner:
        return ""
    header = max(inner)[2]
    return linecache.getline(filename, header).strip()


def _context(filename: str, line: int) -> list[str]:
    first = max(1, line - CONTEXT_LINES)
    return [
        f"{n}: {linecache.getline(filename, n).rstrip()}"
        for n in range(first, line + CONTEXT_LINES + 1)
        if linecache.getline(filename, n)
    ]


class _Tally:
    def __init__(self, code=None) -> None:
        self.code = code  # the code object the line is named by (the frame it is written in)
        self.weight = 0.0
        self.samples = 0
        self.self_weight = 0.0
        self.self_samples = 0
        self.model_samples = 0
        self.callees: Counter = Counter()
        self.direct: Counter = Counter()  # the library function the line itself called
        self.chains: Counter = Counter()
        self.steps: set[int] = set()  # indices of the measured steps it was sampled in


def _weights(samples: list[RawSample], windows: list[tuple[float, float]]):
    """Per sample: (index of its window, seconds it stands for); window -1: outside them all.
    A sample stands for the time since the sample before it (capped), wherever that one fell:
    cutting at window starts would shrink the first sample of every step, and with it whatever
    runs early in a step (an evaluation forward)."""
    starts = [w[0] for w in windows]
    previous: float | None = None
    for sample in samples:
        t, interval = sample[0], sample[4]
        index = bisect.bisect_right(starts, t) - 1
        gap = interval if previous is None else min(t - previous, MAX_GAP_INTERVALS * interval)
        previous = t
        if index < 0 or t > windows[index][1]:
            yield -1, 0.0
        else:
            yield index, gap


def build_lines(
    samples: list[RawSample],
    origin: float,
    windows: list[tuple[float, float, float]],
    evaluation: list[tuple[float, float]],
    interval_s: float,  # the shortest interval asked for (each sample carries its own)
    training_callers: set[tuple[str, int]] | None = None,
) -> LinesObservation:
    """`windows`: (start, end, wall) of each measured step, start/end relative to `origin`;
    `evaluation`: evaluation windows in clock time; `training_callers`: (file, line) of user
    frames seen calling into training compute or data loading."""
    observation = LinesObservation(interval_s=interval_s)
    steps = [(origin + a, origin + b) for a, b, _ in windows]
    if not samples or not steps:
        return observation
    order = sorted(range(len(steps)), key=lambda i: steps[i][0])
    steps = [steps[i] for i in order]
    eval_starts = sorted(evaluation)
    # one tally per (phase, file, line): a line can run in two frames (a generator expression's
    # or a comprehension's own frame, and the frame it is written in), and it is one line to
    # every reader of `run.lines` (rules, the report's top lines, the HTML and trace)
    tallies: dict[tuple[str, tuple], _Tally] = {}
    training: dict[str, set[int]] = defaultdict(set)  # file -> lines seen in training samples
    enclosing: set[tuple] = set(training_callers or ())  # (file, line) holding training compute
    for filename, line in enclosing:
        training[filename].add(line)
    phase_samples: Counter = Counter()
    phase_weights: Counter = Counter()
    total_weight = 0.0
    for (index, weight), (t, phase, users, below, _) in zip(
        _weights(samples, steps), samples, strict=True
    ):
        if index < 0:
            continue
        e = bisect.bisect_right(eval_starts, (t, float("inf"))) - 1
        in_eval = e >= 0 and t <= eval_starts[e][1]
        booked = EVALUATION if in_eval else phase
        phase_samples[booked] += 1
        phase_weights[booked] += weight
        total_weight += weight
        if not users or phase == OURS:
            continue
        if not in_eval and phase in TRAINING_PHASES:
            for depth, (code, line) in enumerate(users):
                training[code.co_filename].add(line)
                if depth:
                    enclosing.add((code.co_filename, line))
        seen = set()
        for depth, (code, line) in enumerate(users):
            key = (code.co_filename, line)
            if key in seen:
                continue
            seen.add(key)
            tally = tallies.get((booked, key))
            if tally is None:
                tally = tallies[(booked, key)] = _Tally(code)
            elif tally.code.co_name.startswith("<") and not code.co_name.startswith("<"):
                tally.code = code  # named by its function, not by `<genexpr>`
            tally.weight += weight
            tally.samples += 1
            tally.steps.add(index)
            if phase == "forward":
                tally.model_samples += 1
            if depth == 0:
                tally.self_weight += weight
                tally.self_samples += 1
                tally.callees.update({callee_name(c) for c in below})
                if below:
                    tally.direct[callee_name(below[0])] += 1
                tally.chains[users[1:]] += 1
    if total_weight <= 0:
        return observation
    clock_s = sum(b - a for a, b in steps)
    mean_wall = sum(w for _, _, w in windows) / len(windows)
    scale = clock_s / total_weight / len(windows)  # sample weight -> seconds per step
    observation.samples = sum(phase_samples.values())
    observation.steps = len(windows)
    observation.seconds_per_sample = clock_s / max(1, observation.samples)
    observation.phase_samples = dict(phase_samples)
    observation.phase_seconds = {phase: w * scale for phase, w in phase_weights.items()}
    for (phase, (filename, line)), tally in _top(tallies):
        code = tally.code
        per_step = tally.weight * scale
        chain = tally.chains.most_common(1)[0][0] if tally.chains else ()
        observation.lines.append(
            LineStat(
                location=f"{short_path(filename)}:{line}",
                phase=phase,
                samples=tally.samples,
                self_samples=tally.self_samples,
                seconds_per_step=per_step,
                share=per_step / mean_wall if mean_wall > 0 else 0.0,
                self_share=tally.self_weight * scale / mean_wall if mean_wall > 0 else 0.0,
                function=getattr(code, "co_qualname", code.co_name),
                code=linecache.getline(filename, line).strip(),
                context=_context(filename, line),
                loop=enclosing_loop(filename, line, training.get(filename, set())),
                chain=[f"{short_path(c.co_filename)}:{n} in {c.co_name}" for c, n in chain],
                callees=_callees(tally),
                encloses_training=(filename, line) in enclosing,
                model_share=tally.model_samples / tally.samples,
                steps_seen=len(tally.steps),
            )
        )
    return observation


def _callees(tally: _Tally) -> list[str]:
    """The most frequent direct callee first, then the other library functions seen below."""
    first = [name for name, _ in tally.direct.most_common(1)]
    rest = [name for name, _ in tally.callees.most_common(12) if name not in first]
    return first + rest[:11]


def _top(tallies: dict) -> list:
    """Per phase, the TOP_PER_PHASE lines with most self samples and as many with most samples
    in all (call sites), largest first."""
    by_phase: dict[str, list] = defaultdict(list)
    for key, tally in tallies.items():
        by_phase[key[0]].append((key, tally))
    kept = []
    for entries in by_phase.values():
        chosen: dict = {}
        for sort_key in (lambda e: e[1].self_samples, lambda e: e[1].samples):
            ranked = sorted(entries, key=sort_key, reverse=True)
            for key, tally in [e for e in ranked if sort_key(e) > 0][:TOP_PER_PHASE]:
                chosen[key] = tally
        kept.extend(sorted(chosen.items(), key=lambda e: -e[1].samples))
    return kept
