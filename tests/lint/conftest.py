import pytest


@pytest.fixture
def project(tmp_path):
    """A folder with its own pyproject.toml so the repo's config never leaks into a test."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    return tmp_path
