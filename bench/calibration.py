"""Calibration: does a finding's stated saving match what `--try` measures on the same script?

For each planted script (tests/diagnose/rules/scripts/), runs `torchdoctor diagnose` (whole-cycle
default, what-if probes on), then `--try` with every run-time fix that answers one of its findings
(trials.fixes FINDING_CODES), each fix alone against the baseline, repeats interleaved round by
round, each run timing whole cycles of the script's loop (trials.cycle) for at least
MIN_WINDOW_S, and further rounds for a fix whose rounds disagree, as `torchdoctor diagnose --try`
does, or (up to `--max-rounds`) whose range cannot yet decide a stated saving it answers; so
stated and tried savings are both shares of the run's time. Prints, per finding with a fix: the
stated saving (measured or estimated) next to the saving --try measured (1 - 1/speedup: the median
over paired rounds, with where their centre lies, `trials.stats.gain_interval` (75%), which
narrows as rounds are added; in the training process's CPU time for fixes of its own work, steadier on a
shared machine, in wall time for loader fixes), and per script whether the top speed finding is
the fix with the largest measured gain. A stated saving is within 1.5x when it is so of the
whole range, off when it is outside 1.5x of the whole range, and undecided otherwise: a 1.5x
verdict on a gain measured anywhere from 10% to 30% would be a coin toss.

    OMP_NUM_THREADS=1 .venv/bin/python bench/calibration.py [--repeats 3] [--steps 10]
        [--max-rounds 12] [--scripts d301,epoch_eval]
    .venv/bin/python bench/calibration.py --reread LOG   # a saved run's rows, read again

`--reread` reads a saved output's rows and the rounds printed under each, and sets where the gain
lies by the sign test (round 9) beside the signed-rank interval (round 10) on the same rounds:
their widths, and each one's 1.5x answer.
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from statistics import median

import torch

from _planted import SCRIPTS, diagnose_planted_fresh
from torchdoctor.trials.api import NothingToTry, run_trials
from torchdoctor.trials.cycle import MIN_WINDOW_S
from torchdoctor.trials.fixes import all_fixes
from torchdoctor.trials.report import Spread
from torchdoctor.trials.stats import gain_interval, median_range

# planted scripts whose findings have a run-time fix (d202: its top fix, the batch size, is a
# suggestion --try never applies: listed to show it, not counted in the targets)
DEFAULT = (
    "d101_main_process_loading",
    "d103_workers_respawned",
    "d105_expensive_getitem",
    "d201_float64",
    "d210_optimizer_loop",
    "d211_anomaly_detection",
    "d212_profiler_left_on",
    "d220_zero_grad_zero_fill",
    "d301_eval_with_autograd",
    "d302_eval_in_train_mode",
    "epoch_eval_with_autograd",
    "d202_batch_too_small",
    # two or three problems a script, each with a --try fix: the ranking between tried fixes
    "multi_float64_adam_eval",
    "multi_anomaly_adamw",
    "multi_profiler_sgd_zero_fill",
    "multi_respawn_adam",
)
RATIO_TARGET = 1.5


@dataclass
class Tried:
    gain: float  # 1 - 1/median speedup (share of the run's time), on `clock`
    low: float  # the same for the ends of where the gain lies (where_gain_lies)
    high: float
    # the clock the trial's verdict read: "phase" (the fix's own phase taken off the step),
    # "cpu" for other fixes of the training process's own work, "wall" for loader fixes
    clock: str
    wall_gain: float | None
    verdict: str
    noise: float  # the baseline's own run-to-run spread on `clock` (max/min - 1)
    rounds: int  # paired rounds measured (more than --repeats where the first ones disagreed)
    values: list[float] = field(default_factory=list)  # each paired round's speedup on `clock`
    # the same rounds on the fix's own phase (trials.stats.phase_speedups), where it names one
    phase_values: list[float] = field(default_factory=list)
    phase_clock: tuple[str, ...] = ()


@dataclass
class Row:
    script: str
    rank: int
    code: str
    stated: float
    basis: str
    tried: Tried | None
    why_untried: str = ""
    # the fix changes what is learned (a larger batch): ranked below every warning by design,
    # so it is not the "largest gain" the top finding is held to; its row is still compared
    changes_semantics: bool = False


def fixes_by_code() -> dict[str, list[str]]:
    """Finding code -> names of the --try fixes that answer it (compile left out: minutes)."""
    table: dict[str, list[str]] = {}
    for fix in all_fixes():
        if fix.NAME == "compile":
            continue
        for code in fix.FINDING_CODES:
            table.setdefault(code, []).append(fix.NAME)
    return table


def share(speedup: float | None) -> float | None:
    return None if not speedup else 1 - 1 / speedup


def baseline_noise(trials) -> dict[str, float]:
    """The baseline's run-to-run spread per clock: largest / smallest run's step time - 1."""
    noise = {}
    for clock, spread in (("wall", trials.baseline.step_s), ("cpu", trials.baseline.cpu_step_s)):
        noise[clock] = spread.high / spread.low - 1 if spread.low else 0.0
    return noise


def tried_gains(trials) -> dict[str, Tried]:
    """Per fix: its gain in CPU time of the training process where the fix changes that
    process's own work (steadier on a shared machine), else (loader workers) in wall time."""
    gains = {}
    noise = baseline_noise(trials)
    for variant in trials.variants:
        name = variant.config.name
        if variant.config.status == "no effect":
            # the fix found nothing to change in this program (e.g. a batch size on a loop that
            # slices its own tensors): its timing says nothing about the finding's saving
            continue
        # the rounds the trial's verdict read (trials.analysis.decisive_speedups): the fix's own
        # phase where it has one, else the process's CPU time or wall time
        clock = variant.decided_on if name != "all" else "wall"
        s = variant.decided_speedup if name != "all" else variant.speedup
        if s is None or not s.median or not s.values or variant.speedup is None:
            continue
        low, high = where_gain_lies(s.values)
        gains[name] = Tried(
            share(s.median),
            share(low),
            share(high),
            clock,
            share(variant.speedup.median),
            variant.verdict,
            noise["wall" if clock == "wall" else "cpu"],
            s.count,
            list(s.values),
            list(variant.phase_speedup.values) if variant.phase_speedup else [],
            variant.phase_clock,
        )
    return gains


def where_gain_lies(speedups: list[float]) -> tuple[float, float]:
    """The paired speedups' 75% interval (trials.stats.gain_interval: Wilcoxon signed-rank on
    their logarithms; round 9 and before: the sign test's median_range, wider on the same
    rounds), or their whole range where the rounds are too few for it."""
    return gain_interval(speedups) or (min(speedups), max(speedups))


def undecided_for(stated: dict[str, list[float]], max_rounds: int) -> Callable[[str, Spread], bool]:
    """`run_trials`' `wants_more`: more rounds of a fix while where its gain lies
    (`where_gain_lies`) leaves a stated saving it answers undecided (`within`), unless the
    rounds cannot decide it by `max_rounds` (`below_noise`): those rounds would cost minutes
    (a profiled script's run took 18 s at load 12) and leave it undecided."""

    def wants_more(name: str, speedups: Spread) -> bool:
        if not speedups.values:
            return False
        low, high = where_gain_lies(speedups.values)
        gains = share(low), share(high)
        rounds = len(speedups.values)
        return any(
            within(saving, *gains) == "undecided"
            and not below_noise(saving, *gains, rounds, max_rounds)
            for saving in stated.get(name, [])
        )

    return wants_more


def calibrate(
    name: str, steps: int, repeats: int, max_rounds: int
) -> tuple[list[Row], dict, str, str]:
    """(rows, the baseline's noise per clock, the trials' window, what the what-ifs did)."""
    script = str(SCRIPTS / f"{name}.py")
    # in a fresh process, as the CLI and the trials run: a copy's calls pay what the program's
    # did only where the allocator's history is the program's (whatif/allocator.py)
    report = diagnose_planted_fresh(name, steps=None, warmup=3, budget_s=30)
    whatif = report.run.whatif
    probes = f"{len(whatif.timings)} timed in {whatif.seconds:.2f} s of {whatif.budget_s:.2f} s" + (
        f"; not measured: {'; '.join(whatif.skipped)}" if whatif.skipped else ""
    )
    table = fixes_by_code()
    findings = [f for f in report.findings if f.saving > 0 or f.id in table]
    fixes = sorted({fix for f in findings for fix in table.get(f.id, [])})
    stated: dict[str, list[float]] = {}
    for finding in findings:
        for fix in table.get(finding.id, []):
            if finding.saving > 0:
                stated.setdefault(fix, []).append(finding.saving)
    gains: dict[str, Tried] = {}
    noise: dict[str, float] = {}
    window, failure = "", ""
    no_effect: set[str] = set()
    if fixes:
        try:
            trials = run_trials(
                script,
                [],
                fixes,
                steps=steps,
                repeats=repeats,
                diagnosis=report,
                min_window_s=MIN_WINDOW_S,
                max_repeats=max_rounds,
                wants_more=undecided_for(stated, max_rounds),
            )
            gains, noise, window = tried_gains(trials), baseline_noise(trials), trials.window
            no_effect = {v.config.name for v in trials.variants if v.config.status == "no effect"}
        except NothingToTry as exc:
            failure = str(exc)
    rows = []
    for rank, finding in enumerate(findings, 1):
        answers = [gains[fix] for fix in table.get(finding.id, []) if fix in gains]
        tried = max(answers, key=lambda t: t.gain) if answers else None
        why = ""
        if tried is None:
            unapplied = [f for f in table.get(finding.id, []) if f in no_effect]
            why = failure or (
                "no --try fix"
                if finding.id not in table
                else f"--try {unapplied[0]} found nothing to change"
                if unapplied
                else "not measured"
            )
        rows.append(
            Row(
                name,
                rank,
                finding.id,
                finding.saving,
                finding.saving_basis,
                tried,
                why,
                finding.changes_semantics,
            )
        )
    return rows, noise, window, probes


def within(stated: float, low: float | None, high: float | None) -> str:
    """Is `stated` within RATIO_TARGET of a gain measured between `low` and `high`? "yes" where
    it is so of the whole range, "no" where it is outside RATIO_TARGET of all of it, "undecided"
    where the range straddles a bound."""
    if low is None or high is None:
        return "undecided"
    if low > 0 and high / RATIO_TARGET <= stated <= low * RATIO_TARGET:
        return "yes"
    if stated > high * RATIO_TARGET or stated * RATIO_TARGET < low:
        return "no"
    return "undecided"


def band_width(stated: float) -> float:
    """Width, in points of gain, of the gains `stated` is within RATIO_TARGET of."""
    return stated * (RATIO_TARGET - 1 / RATIO_TARGET)


def projected_width(low: float, high: float, rounds: int, max_rounds: int) -> float:
    """Where the gain lies, its width after `max_rounds` rounds: an interval of paired rounds
    narrows as one over the square root of their number (a projection, not a bound)."""
    return (high - low) * (rounds / max(rounds, max_rounds)) ** 0.5


def below_noise(
    stated: float, low: float | None, high: float | None, rounds: int, max_rounds: int
) -> bool:
    """An undecided row the rounds cannot decide by `max_rounds`: where the gain lies, at the
    width projected for that many rounds around its centre now, could neither fit in the
    RATIO_TARGET band around `stated` ("yes": wider than the band) nor clear it ("no": the
    centre is within half that width of the band). A stated 1% is within 1.5x of 0.7%..1.5%, a
    band of 0.8 points, against rounds 6-11 points apart at load 7-19."""
    if low is None or high is None or stated <= 0:
        return False
    width = projected_width(low, high, rounds, max_rounds)
    centre = (low + high) / 2
    can_say_yes = width <= band_width(stated)
    can_say_no = (
        centre + width / 2 < stated / RATIO_TARGET or centre - width / 2 > stated * RATIO_TARGET
    )
    return not (can_say_yes or can_say_no)


def agreement(row: Row, max_rounds: int) -> str:
    """`within` for a row, the tried range being where the gain lies (`where_gain_lies`: it
    narrows as rounds are added); the ratio shown is to the median. An undecided row the
    rounds could not decide by `max_rounds` says so (`below_noise`), with the widths."""
    if row.tried is None or row.stated <= 0:
        return "-"
    stated, t = row.stated, row.tried
    said = f"{stated / t.gain:.2f}x" if t.gain > 0 else f"tried {percent(t.gain)}"
    verdict = within(stated, t.low, t.high)
    if verdict == "undecided":
        tried = f"tried {percent(t.low)}..{percent(t.high)}"
        if below_noise(stated, t.low, t.high, t.rounds, max_rounds):
            return (
                f"undecided, below the noise ({said}, {tried}: "
                f"{100 * (t.high - t.low):.0f} points wide after {t.rounds} rounds, "
                f"~{100 * projected_width(t.low, t.high, t.rounds, max_rounds):.0f} "
                f"after {max(t.rounds, max_rounds)}, against a 1.5x band of "
                f"{100 * band_width(stated):.1f} points)"
            )
        return f"undecided ({said}, {tried})"
    return f"{verdict} ({said})"


def top_is_best(rows: list[Row]) -> tuple[str, str]:
    """(status, words): is the highest-ranked speed finding with a --try fix the one whose fix
    gained most? status "yes", "no", "tie" (the two gains' middle ranges overlap) or "n/a". A
    higher finding without a trial (a suggestion such as the batch size, or no run-time fix) is
    named: the strict reading of the target counts it as "no". A fix that changes what is
    learned (the batch size) is ranked below every warning by design and is not the gain the top
    finding is held to; where it gained most, the words say so."""
    speed = [r for r in rows if r.stated > 0]
    tried = [r for r in speed if r.tried is not None and not r.changes_semantics]
    if not tried:
        return "n/a", "no finding with a --try fix that keeps what is learned"
    best = max(tried, key=lambda r: r.tried.gain)
    top = tried[0]
    beyond = [
        r
        for r in speed
        if r.changes_semantics and r.tried is not None and r.tried.gain > best.tried.gain
    ]
    if beyond:
        prefix_more = (
            f"{beyond[0].code} (changes what is learned) gained {percent(beyond[0].tried.gain)}; "
        )
    else:
        prefix_more = ""
    above = ", ".join(f"{r.code} ({r.why_untried})" for r in speed[: speed.index(top)])
    prefix = prefix_more + (f"above it, untried: {above}; " if above else "")
    if top is best:
        return "yes", f"{prefix}{top.code} gained most ({percent(top.tried.gain)})"
    status = "tie" if best.tried.low <= top.tried.high else "no"
    return status, (
        f"{prefix}{best.code} gained {percent(best.tried.gain)} "
        f"({percent(best.tried.low)}..{percent(best.tried.high)}), top {top.code} "
        f"{percent(top.tried.gain)} ({percent(top.tried.low)}..{percent(top.tried.high)})"
    )


def stated_words(row: Row) -> str:
    """The stated saving and its basis; "not measured" alone where no number stands (no 0%)."""
    if row.basis == "not measured":
        return "not measured"
    return f"{percent(row.stated)} ({row.basis})"


def percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def rounds_line(tried: Tried) -> str:
    """Each paired round's speedup, and where the gain lies by the sign test (median_range,
    round 9) and by the signed-rank interval (gain_interval, round 10) on the same rounds."""
    values = tried.values
    old = [share(v) for v in median_range(values)]
    new = [share(v) for v in where_gain_lies(values)]
    return (
        f"{tried.clock} speedups {' '.join(f'{v:.4f}' for v in values)}; "
        f"sign test {percent(old[0])}..{percent(old[1])}, "
        f"signed rank {percent(new[0])}..{percent(new[1])}"
    )


def phase_line(row: Row) -> str:
    """The row's rounds read on the fix's own phase (a narrower clock, blind to what the fix
    changes elsewhere): where the gain lies, and the stated saving's 1.5x answer on it."""
    t = row.tried
    low, high = (share(v) for v in where_gain_lies(t.phase_values))
    return (
        f"on its own phase ({', '.join(t.phase_clock)}): {percent(share(median(t.phase_values)))} "
        f"({percent(low)}..{percent(high)}, {len(t.phase_values)} rounds), within 1.5x: "
        f"{within(row.stated, low, high)}"
    )


def print_row(row: Row, max_rounds: int) -> None:
    t = row.tried
    tried, wall, verdict = row.why_untried, "-", "-"
    if t is not None:
        tried = (
            f"{percent(t.gain)} {t.clock} ({percent(t.low)}..{percent(t.high)}, {t.rounds} rounds)"
        )
        wall, verdict = percent(t.wall_gain), t.verdict
    print(
        f"| {row.script} | {row.rank} | {row.code} | {stated_words(row)} "
        f"| {tried} | {wall} | {verdict} | {agreement(row, max_rounds)} |"
    )


ROUNDS = re.compile(r"<!-- (\S+) (\S+) (cpu|wall|phase) speedups:? ([0-9. ]+)")
STATED = re.compile(r"\| (\d+)% \((measured|estimated)\) \|")


def reread(path: str) -> None:
    """The rows of a saved output with rounds under them: stated, the two intervals, 1.5x."""
    print(
        "| script | finding | stated (basis) | rounds | sign test | signed rank | 1.5x (sign test -> signed rank) |"
    )
    print("|---|---|---|---|---|---|---|")
    counts: dict[str, list[str]] = {}
    stated: tuple[float, str] | None = None
    widths = []
    for line in open(path, encoding="utf-8"):
        found = STATED.search(line)
        if line.startswith("| ") and found:
            stated = int(found.group(1)) / 100, found.group(2)
            continue
        rounds = ROUNDS.search(line)
        if rounds is None or stated is None:
            continue
        name, code, clock = rounds.group(1), rounds.group(2), rounds.group(3)
        values = [float(v) for v in rounds.group(4).split()]
        old = [share(v) for v in median_range(values)]
        new = [share(v) for v in where_gain_lies(values)]
        saving, basis = stated
        before, after = within(saving, *old), within(saving, *new)
        widths.append((old[1] - old[0], new[1] - new[0]))
        counts.setdefault(basis, []).append(after)
        print(
            f"| {name} | {code} | {percent(saving)} ({basis}) | {len(values)} {clock} "
            f"| {percent(old[0])}..{percent(old[1])} | {percent(new[0])}..{percent(new[1])} "
            f"| {before} -> {after} |"
        )
        stated = None
    if widths:
        old_width = sum(w for w, _ in widths) / len(widths)
        new_width = sum(w for _, w in widths) / len(widths)
        print(
            f"\nmean width: sign test {100 * old_width:.1f} points, signed rank {100 * new_width:.1f}"
        )
    for basis, said in counts.items():
        tally = ", ".join(f"{said.count(word)} {word}" for word in ("yes", "no", "undecided"))
        print(f"{basis} savings within {RATIO_TARGET}x (signed rank): {tally}")


def selected(options) -> list[str]:
    names = list(options.names) or list(DEFAULT)
    if options.scripts:
        wanted = [part.strip() for part in options.scripts.split(",") if part.strip()]
        pool = sorted(p.stem for p in SCRIPTS.glob("*.py"))
        names = [n for n in pool if any(w in n for w in wanted)]
    return names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="planted script names (default: the bench set)")
    parser.add_argument("--scripts", default="", help="comma list: scripts whose name holds one")
    parser.add_argument("--steps", type=int, default=10, help="at least; whole cycles rule")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--max-rounds",
        type=int,
        default=0,
        help="rounds at most while a row is undecided (default: 4 x --repeats)",
    )
    parser.add_argument("--reread", default="", help="a saved output: its rows read again")
    options = parser.parse_args()
    if options.reread:
        reread(options.reread)
        return
    max_rounds = options.max_rounds or 4 * options.repeats
    torch.set_num_threads(1)
    started = time.perf_counter()
    print(
        "| script | rank | finding | stated (basis) | --try gain (75% interval, rounds) "
        "| wall gain | trial verdict | within 1.5x |"
    )
    print("|---|---|---|---|---|---|---|---|")
    verdicts = []
    agreements: dict[str, list[str]] = {"measured": [], "estimated": []}
    for name in selected(options):
        rows, noise, window, probes = calibrate(name, options.steps, options.repeats, max_rounds)
        for row in rows:
            print_row(row, max_rounds)
            if row.tried is not None:
                print(f"<!-- {name} {row.code} {rounds_line(row.tried)} -->")
            if row.tried is not None and row.tried.phase_values:
                print(f"<!-- {name} {row.code} {phase_line(row)} -->")
            if row.tried is not None and row.stated > 0:
                agreements.setdefault(row.basis, []).append(agreement(row, max_rounds))
        if not rows:
            print(f"| {name} | - | (no finding) | - | - | - | - | - |")
        verdicts.append((name, top_is_best(rows), noise, window, probes))
    print()
    for name, (status, words), noise, window, probes in verdicts:
        spread = ", ".join(f"{clock} {percent(value)}" for clock, value in noise.items())
        print(f"{name}: top = largest measured gain: {status}: {words}; baseline noise {spread}")
        print(f"    trial window: {window or '-'}")
        print(f"    what-if probes: {probes}")
    statuses = [status for _, (status, _), *_ in verdicts]
    strict = sum(status == "yes" and "untried" not in words for _, (status, words), *_ in verdicts)
    print(
        f"\ntop finding with a --try fix = largest measured gain: {statuses.count('yes')} yes, "
        f"{statuses.count('tie')} tie (ranges overlap), {statuses.count('no')} no, "
        f"{statuses.count('n/a')} n/a; the top finding overall is that fix in {strict}"
    )
    for basis, said in agreements.items():
        words = [answer.split()[0].rstrip(",") for answer in said]
        counts = ", ".join(f"{words.count(word)} {word}" for word in ("yes", "no", "undecided"))
        noise = sum("below the noise" in answer for answer in said)
        print(
            f"{basis} savings within {RATIO_TARGET}x of --try: {counts} "
            f"({noise} of them below the noise: not decidable in {max_rounds} rounds)"
        )
    print(f"total {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
