"""docs/architecture.md stays true: every package under src/torchdoctor is on the page."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "src" / "torchdoctor"


def test_every_package_is_named_in_the_architecture_page():
    page = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    packages = sorted(
        init.parent.relative_to(PACKAGE).as_posix() for init in PACKAGE.rglob("__init__.py")
    )
    assert "cli" in packages and "diagnose/probes" in packages  # the walk found them
    missing = [name for name in packages if name != "." and f"{name}/" not in page]
    assert not missing, f"docs/architecture.md does not describe package(s) {missing}: add them"


def test_every_top_level_module_is_named_in_the_architecture_page():
    page = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    modules = [p.name for p in PACKAGE.glob("*.py") if not p.name.startswith("__")]
    missing = [name for name in modules if name not in page]
    assert not missing, f"docs/architecture.md does not describe module(s) {missing}: add them"
