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


def repeated(label, stages, rates, base_rates):
    from statistics import median

    from torchdoctor.trials.tuning.repeated import spread

    speedup = median(rates) / median(base_rates)
    return AblationRow(
        label, stages, None, speedup=speedup, rates=rates, spread=spread(rates, base_rates)
    )


def test_a_median_gain_inside_the_noise_is_not_chosen():
    """The issue's case: the same configuration once at 0.56x and once at 1.63x. A median above
    the margin whose repeats overlap the baseline's is noise, not a speed-up."""
    base = [100.0, 104.0, 98.0]
    noisy = ablation(
        repeated("baseline", [], base, base),
        repeated("+amp", ["amp"], [56.0, 163.0, 120.0], base),
    )
    assert noisy.cumulative[1].speedup > 1.05
    assert best_stages(noisy) == []
    clear = ablation(
        repeated("baseline", [], base, base),
        repeated("+amp", ["amp"], [150.0, 140.0, 160.0], base),
    )
    assert best_stages(clear) == ["amp"]
    assert clear.cumulative[1].spread == (140.0 / 100.0, 160.0 / 100.0)


def test_each_distinct_configuration_is_measured_once_per_round_interleaved():
    from torchdoctor.trials.tuning.probe import ProbeResult
    from torchdoctor.trials.tuning.repeated import config_key, measure

    order = []

    def run(changes, evaluate):
        order.append((changes["precision"], evaluate))
        return ProbeResult(ok=True, samples_per_s=100.0 + len(order))

    # with two stages "+amp" (cumulative) and "all - data" are the same configuration
    rows = [{"precision": "fp32"}, {"precision": "bf16"}, {"precision": "bf16"}]
    configs = {config_key(c): c for c in rows}
    results = measure(configs, run, repeats=3)
    assert len(configs) == 2 and len(order) == 6
    assert [p for p, _ in order] == ["fp32", "bf16", "bf16", "fp32", "fp32", "bf16"]
    assert [e for _, e in order] == [True, True, False, False, False, False]  # evaluated once
    bf16 = results[config_key({"precision": "bf16"})]
    assert bf16.rates == [102.0, 103.0, 106.0] and bf16.result.samples_per_s == 103.0
