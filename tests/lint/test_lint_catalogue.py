"""The rule catalogue: unique codes, Ruff-style docstrings, generated docs up to date."""

from __future__ import annotations

import subprocess
import sys

from lint_helpers import REPO

from torchdoctor.lint.catalogue import catalogue
from torchdoctor.lint.rule import DOC_SECTIONS
from torchdoctor.lint.rules import known_codes, rule_classes


def test_codes_and_names_unique():
    classes = rule_classes()
    assert len({c.code for c in classes}) == len(classes)
    assert len({c.name for c in classes}) == len(classes)
    assert len(known_codes()) == len(set(known_codes()))


def test_every_rule_declares_itself_correctly():
    problems = [p for cls in rule_classes() for p in cls.validate()]
    assert problems == []
    for cls in rule_classes():
        assert tuple(cls.sections()) == DOC_SECTIONS
        assert all(cls.sections()[s] for s in DOC_SECTIONS), cls.code


def test_one_rule_per_module():
    modules = [cls.__module__ for cls in rule_classes()]
    assert len(set(modules)) == len(modules)
    for cls in rule_classes():
        assert cls.__module__.rsplit(".", 1)[1].startswith(cls.code.lower())


def test_docs_catalogue_is_current():
    committed = (REPO / "docs" / "lint-rules.md").read_text()
    assert committed == catalogue(), (
        "run: python -m torchdoctor.lint.catalogue > docs/lint-rules.md"
    )


def test_lint_does_not_import_torch(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import torch\nx = torch.load('a.pt')\n")
    code = (
        "import sys\n"
        "from torchdoctor.cli import main\n"
        f"try:\n    main(['lint', '-q', {str(script)!r}])\n"
        "except SystemExit as exc:\n    status = exc.code\n"
        "print('torch' in sys.modules, status)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "False 1", out.stdout + out.stderr


def test_relative_links_in_lint_docs_resolve():
    import re

    for doc in ("lint.md", "lint-rules.md", "benchmarks/lint.md"):
        path = REPO / "docs" / doc
        for target in re.findall(r"\]\(([^)#\s]+)", path.read_text()):
            if not target.startswith(("http://", "https://")):
                assert (path.parent / target).exists(), (
                    f"{doc} links {target}, which does not exist"
                )
