"""Which stack `tune` recommends from its ablation (pure): never one slower than the baseline."""

from torchdoctor.trials.tuning.ablation import Ablation, AblationRow, best_stages


def row(label, stages, speedup):
    return AblationRow(label, stages, result=None, speedup=speedup)


def ablation(*rows, leave_one_out=()):
    return Ablation(stages=[], cumulative=list(rows), leave_one_out=list(leave_one_out))


def test_a_stack_slower_than_the_baseline_is_not_chosen():
    # measured by `torchdoctor tune shapes` on a 2-core CPU: every stage made it slower
    measured = ablation(
        row("baseline", [], 1.0),
        row("+amp", ["amp"], 0.73),
        row("+compile", ["amp", "compile"], 0.76),
        leave_one_out=[row("all - amp", ["compile"], 0.57), row("all - compile", ["amp"], 0.49)],
    )
    assert best_stages(measured) == []


def test_the_fastest_measured_configuration_wins_even_from_leave_one_out():
    measured = ablation(
        row("baseline", [], 1.0),
        row("+amp", ["amp"], 1.6),
        row("+compile", ["amp", "compile"], 1.3),
        leave_one_out=[row("all - amp", ["compile"], 1.1), row("all - compile", ["amp"], 1.62)],
    )
    assert best_stages(measured) == ["amp"]


def test_a_gain_within_the_margin_is_not_worth_a_change():
    measured = ablation(row("baseline", [], 1.0), row("+amp", ["amp"], 1.03))
    assert best_stages(measured) == []
