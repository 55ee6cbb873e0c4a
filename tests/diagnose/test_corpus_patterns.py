"""Patterns seen in the real-programs corpus (bench/real_programs), each reproduced on a small
script of our own: what torchdoctor got wrong on a public program, and must not again."""

from __future__ import annotations

import textwrap


def _line_of(path, marker: str) -> int:
    lines = path.read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if marker in line)


def test_a_read_inside_an_installed_package_is_blamed_on_the_programs_call(diagnose_here, tmp_path):
    """torchmetrics and Lightning read tensors (`.item()`) inside their own code: D401 named
    lines of site-packages/torchmetrics, which the user cannot change. The program's line that
    called into the package is the one to name."""
    package = tmp_path / "site-packages" / "metricpkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        textwrap.dedent(
            """
            def update(value):
                return _as_float(value)

            def _as_float(value):
                return value.item()
            """
        )
    )
    report = diagnose_here(
        f"""
        import sys
        sys.path.insert(0, {str(package.parent)!r})
        import metricpkg

        model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for step in range(10):
            loss = model(torch.randn(16, 32)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            metricpkg.update(loss.detach())  # the program's call into the package
        """,
        steps=4,
        warmup=2,
    )
    assert report.run.status == "stopped", report.run.error
    line = _line_of(tmp_path / "train.py", "the program's call into the package")
    sites = [site.location for site in report.run.sync_sites]
    assert len(sites) == 1 and sites[0].endswith(f"train.py:{line}"), sites
