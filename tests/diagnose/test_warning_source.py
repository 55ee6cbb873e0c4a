"""A warning torch raises inside a call we wrap is shown at the program's line, as in its plain
run; a warning of our own keeps its place."""

from __future__ import annotations

import warnings

from torchdoctor.intercept.warning_source import WarningSource, program_frame_of


def test_torchs_warning_through_our_wrapper_names_the_programs_line(diagnose):
    diagnosis = diagnose(
        """
        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(12):
            loss = model(torch.randn(8, 4)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total = float(loss)  # torch warns: a scalar of a tensor that requires grad
        """,
        "--steps",
        "6",
    )
    assert diagnosis.returncode == 0, diagnosis.stderr
    shown = [line for line in diagnosis.stderr.splitlines() if "UserWarning" in line]
    assert shown, diagnosis.stderr  # torch warns here; under diagnose our wrapper calls float()
    assert all("train.py:" in line for line in shown), shown
    assert "torchdoctor" not in "\n".join(shown)


def test_a_warning_a_nested_module_raises_up_its_calls_names_the_programs_line(diagnose):
    """A submodule's warning with stacklevel=3 (forward, torch's _call_impl, then the module call)
    lands on our nn.Module.__call__ wrapper, which runs torch's call itself in nested calls."""
    diagnosis = diagnose(
        """
        import warnings

        class Noisy(nn.Linear):
            def forward(self, x):
                warnings.warn("noisy forward", UserWarning, stacklevel=3)
                return super().forward(x)

        model = nn.Sequential(Noisy(4, 4), nn.Linear(4, 1))
        opt = torch.optim.Adam(model.parameters())
        for batch in torch.randn(12, 8, 4):
            model(batch).sum().backward()
            opt.step()
            opt.zero_grad()
        """,
        "--steps",
        "6",
    )
    assert diagnosis.returncode == 0, diagnosis.stderr
    shown = [line for line in diagnosis.stderr.splitlines() if "noisy forward" in line]
    assert shown, diagnosis.stderr
    assert "torchdoctor" not in "\n".join(shown), shown


def test_a_warning_of_our_own_code_keeps_its_place():
    source = WarningSource()
    seen = []
    previous = warnings.showwarning
    warnings.showwarning = lambda message, category, filename, lineno, *rest: seen.append(
        (filename, lineno)
    )
    try:
        source.install()
        assert program_frame_of(__file__, 1) is None  # not ours: nothing to move
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = source._show  # catch_warnings put the hook aside: again
            warnings.warn_explicit(
                "ours", UserWarning, WarningSource.install.__code__.co_filename, 3
            )
        assert seen and seen[-1][0].endswith("warning_source.py")  # not a wrapper's call
    finally:
        source.restore()
        warnings.showwarning = previous
