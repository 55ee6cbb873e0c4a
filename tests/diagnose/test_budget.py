"""What `--budget` covers in whole-cycle mode: the measurement, not the program's start-up."""

from __future__ import annotations

import pytest


@pytest.mark.timing
def test_a_slow_start_up_does_not_spend_the_budget(diagnose_here):
    """Round 11: the budget clock started with the session, so a program whose start-up (data,
    model, imports) took most of `--budget 5` was stopped after 3 measured steps. The budget
    counts from the first measured step: this loop sleeps 2 s before its first step, has a
    budget of 1.5 s and steps of ~10 ms, and is measured for its 20 steps at least (an epoch of
    1000 steps is beyond the budget, so the budget, not the epoch, stops it)."""
    report = diagnose_here(
        """
        import time
        from torch.utils.data import DataLoader, TensorDataset

        time.sleep(2.0)  # a slow start-up: data made, a checkpoint read, ...
        model = nn.Linear(8, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        loader = DataLoader(TensorDataset(torch.randn(4000, 8)), batch_size=4)
        for (x,) in loader:
            time.sleep(0.01)
            loss = model(x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        steps=None,
        budget_s=1.5,
        whatif=False,
    )
    assert report.run.status == "stopped", report.run.error
    assert len(report.run.steps) >= 20, (len(report.run.steps), report.run.notes)
    assert any("--budget of 1.5 s" in note for note in report.run.notes), report.run.notes


def test_an_epoch_is_seen_when_the_program_calls_train_inside_its_loop(diagnose_here):
    """hcnoh's DKT calls `model.train()` inside its loop, after the fetch, and `model.eval()` for
    its test pass at the epoch's end: the training loader's next iter() ran with the model in
    eval mode, no epoch boundary was seen, and whole-cycle mode ran its whole budget over 3-step
    epochs. A loader over a dataset that began a training epoch, iterated again with autograd
    on, begins the next one; the test loader's Subset is another dataset."""
    report = diagnose_here(
        """
        from torch.utils.data import DataLoader, TensorDataset, random_split

        data = TensorDataset(torch.randn(120, 8), torch.randn(120, 1))
        train, test = random_split(data, [100, 20])
        train_loader = DataLoader(train, batch_size=4)
        test_loader = DataLoader(test, batch_size=4)
        model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.1), nn.Linear(8, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for epoch in range(100):
            for x, y in train_loader:
                model.train()
                loss = nn.functional.mse_loss(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
            with torch.no_grad():
                model.eval()
                for x, y in test_loader:
                    model(x)
        """,
        steps=None,
        budget_s=20.0,
        whatif=False,
    )
    assert report.run.status == "stopped", report.run.error
    assert any("a whole cycle was measured" in note for note in report.run.notes), report.run.notes
    assert len(report.run.steps) < 60, len(report.run.steps)
