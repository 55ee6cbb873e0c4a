"""Recall of `torchdoctor lint` on the planted diagnose scripts, and its findings on their controls.

Every planted script under tests/diagnose/rules/scripts/ plants a known problem (a diagnose code:
the `dNNN_*` scripts by their name, the `multi_*` scripts by MULTI below, the styles sets by the
`PLANTED*` tables of tests/diagnose/rules/styles.py). Where that problem shows in the source, a
lint rule should find it: EXPECTED says which lint codes answer which diagnose code (each one a
code that src/torchdoctor/techniques.py ties to the same technique; the bench checks it), and
UNCOVERED lists the source-visible problems lint has no rule for yet.

Prints recall per lint rule and the misses, then the false positives: every finding on the
`clean_*` scripts, the styles rows of kind "clean", and the `--fixed` control of each styles script. Lint is static, so the
control is the script's source with its `--fixed` switch folded to true (`"--fixed" in sys.argv`,
`FIXED`, `fixed`, `args.fixed`, `self.fixed`, and names assigned from them) and the branches it
decides pruned; the planted run lints the same fold with the switch false (what runs without
`--fixed`). Line numbers of those two are of the folded source.

    OMP_NUM_THREADS=1 .venv/bin/python bench/lint_recall.py [--styles-py PATH] [--set styles3]
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import re
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "tests" / "diagnose" / "rules" / "scripts"

# diagnose code -> the lint codes that find that problem in the source (any one of them counts)
EXPECTED: dict[str, tuple[str, ...]] = {
    "D101": ("TD102",),
    "D107": ("TD129",),
    "D106": ("TD101",),
    "D201": ("TD128",),
    "D203": ("TD120", "TD135"),
    "D205": ("TD121",),
    "D210": ("TD136",),
    "D209": ("TD108",),
    "D211": ("TD127",),
    "D212": ("TD134",),
    "D214": ("TD131",),
    "D215": ("TD130",),
    "D220": ("TD122",),
    "D221": ("TD125",),
    "D222": ("TD124",),
    "D301": ("TD105", "TD106", "TD123"),
    "D302": ("TD107",),
    "D305": ("TD126",),
    "D401": ("TD116",),
    "D503": ("TD133",),
    "D601": ("TD118",),
    "D602": ("TD117",),
    "D603": ("TD109",),
    "D701": ("TD132",),
}
# problems written in the source that no lint rule looks for yet
UNCOVERED = {
    "D103": "DataLoader(workers) without persistent_workers, iterated per epoch",
    "D702": "print/logging every step",
}
# the multi_* scripts plant several problems (tests/diagnose/rules/test_planted_scripts.py)
MULTI = {
    "multi_float64_adam_eval": ("D201", "D210", "D301"),
    "multi_anomaly_adamw": ("D211", "D210"),
    "multi_profiler_sgd_zero_fill": ("D212", "D210", "D220"),
    "multi_respawn_adam": ("D103", "D210"),
}


class Script(NamedTuple):
    path: Path
    codes: tuple[str, ...]  # planted diagnose codes
    has_control: bool  # a `--fixed` switch gives its own clean control


def check_expected_against_techniques() -> list[str]:
    sys.path.insert(0, str(ROOT / "src"))
    from torchdoctor.techniques import TECHNIQUES

    problems = []
    for code, lint_codes in EXPECTED.items():
        tied = {lc for t in TECHNIQUES if code in t.diagnose for lc in t.lint}
        loose = set(lint_codes) - tied
        if loose:
            problems.append(f"{code}: {sorted(loose)} not tied to it in techniques.py")
    return problems


def load_styles(path: Path) -> dict[str, list]:
    spec = importlib.util.spec_from_file_location("planted_styles_table", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {
        name: value
        for name, value in vars(module).items()
        if re.fullmatch(r"PLANTED\d*", name) and isinstance(value, list)
    }


def planted_scripts(styles_py: Path, only_set: str | None) -> tuple[list[Script], list[Path]]:
    scripts, clean = [], []
    if only_set in (None, "scripts"):
        for path in sorted(SCRIPTS.glob("*.py")):
            if match := re.match(r"d(\d{3})_", path.name):
                scripts.append(Script(path, (f"D{match.group(1)}",), False))
            elif path.stem in MULTI:
                scripts.append(Script(path, MULTI[path.stem], False))
            elif path.name.startswith("clean_"):
                clean.append(path)
    for rows in load_styles(styles_py).values():
        for row in rows:
            if only_set not in (None, row.folder.name):
                continue
            path = styles_py.parent / row.folder.relative_to(row.folder.parents[1]) / row.path.name
            path = path if path.is_file() else row.path
            if row.kind == "clean":  # the problem is absent or does not apply: a clean script
                clean.append(path)
            else:
                scripts.append(Script(path, (row.code,), True))
    return scripts, clean


class _FoldFixed(ast.NodeTransformer):
    """The source with its `--fixed` switch set to `fixed`: the switch's expressions become
    constants and the `if`/ternary branches they decide are pruned."""

    SWITCH_NAMES = {"fixed", "FIXED"}

    def __init__(self, fixed: bool) -> None:
        self.fixed = fixed
        self.names: dict[str, bool] = {}

    def switch_value(self, node: ast.expr) -> bool | None:
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left = node.left
            if isinstance(left, ast.Constant) and left.value == "--fixed":
                if isinstance(node.ops[0], ast.In):
                    return self.fixed
                if isinstance(node.ops[0], ast.NotIn):
                    return not self.fixed
        if isinstance(node, ast.Name):
            if node.id in self.SWITCH_NAMES:
                return self.fixed
            return self.names.get(node.id)
        if isinstance(node, ast.Attribute) and node.attr == "fixed":
            return self.fixed
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = self.switch_value(node.operand)
            return None if inner is None else not inner
        return None

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        value = self.switch_value(node.value)
        if value is not None:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.names[target.id] = value
        return self.generic_visit(node)

    def visit_If(self, node: ast.If) -> ast.AST | list[ast.stmt]:
        value = self.switch_value(node.test)
        if value is None:
            return self.generic_visit(node)
        kept = node.body if value else node.orelse
        out: list[ast.stmt] = []
        for statement in kept:
            visited = self.visit(statement)
            out.extend(visited if isinstance(visited, list) else [visited])
        return out or [ast.Pass()]

    def visit_Name(self, node: ast.Name) -> ast.AST:
        value = self.switch_value(node) if isinstance(node.ctx, ast.Load) else None
        return ast.Constant(value) if value is not None else node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        value = self.switch_value(node)
        return ast.Constant(value) if value is not None else self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        values = [self.switch_value(v) for v in node.values]
        decided = False if isinstance(node.op, ast.And) else True
        if decided in values:
            return ast.Constant(decided)
        return self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        value = self.switch_value(node.test)
        if value is None:
            return self.generic_visit(node)
        return self.visit(node.body if value else node.orelse)


def with_switch(source: str, fixed: bool) -> str:
    tree = _FoldFixed(fixed).visit(ast.parse(source))
    return ast.unparse(ast.fix_missing_locations(tree))


def lint(paths: list[Path]) -> dict[Path, list]:
    from torchdoctor.lint.runner import LintOptions, run_lint

    result = run_lint([str(p) for p in paths], LintOptions(jobs=1))
    found: dict[Path, list] = defaultdict(list)
    for violation in result.violations:
        found[Path(violation.path).resolve()].append(violation)
    return found


def variants(scripts: list[Script], tmp: Path) -> tuple[dict[Path, Path], dict[Path, Path]]:
    """For each styles script, its source with the switch folded to planted and to fixed, written
    under `tmp`: {variant path: script path} for each; the other scripts are linted as written."""
    planted, controls = {}, {}
    for script in scripts:
        if not script.has_control:
            planted[script.path.resolve()] = script.path
            continue
        source = script.path.read_text()
        for fixed, table in ((False, planted), (True, controls)):
            variant = tmp / ("fixed" if fixed else "planted") / script.path.parent.name
            variant.mkdir(parents=True, exist_ok=True)
            (variant / script.path.name).write_text(with_switch(source, fixed))
            table[(variant / script.path.name).resolve()] = script.path
    return planted, controls


def recall(scripts: list[Script], codes_of: dict[Path, set[str]]) -> tuple[dict, list, Counter]:
    per_rule: dict[str, Counter] = defaultdict(Counter)
    misses, uncovered = [], Counter()
    for script in scripts:
        codes = codes_of.get(script.path, set())
        for planted in script.codes:
            if planted in UNCOVERED:
                uncovered[planted] += 1
            if planted not in EXPECTED:
                continue
            expected = EXPECTED[planted]
            key = "/".join(expected)
            per_rule[key]["planted"] += 1
            if codes & set(expected):
                per_rule[key]["found"] += 1
            else:
                misses.append((script.path.relative_to(script.path.parents[1]), planted, key))
    return per_rule, misses, uncovered


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--styles-py",
        type=Path,
        default=ROOT / "tests" / "diagnose" / "rules" / "styles.py",
        help="the table of planted styles scripts (another checkout's, to read a new set)",
    )
    parser.add_argument("--set", help="one set only: scripts, styles, styles2, ...")
    args = parser.parse_args()
    problems = check_expected_against_techniques()
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    scripts, clean = planted_scripts(args.styles_py.resolve(), args.set)
    with tempfile.TemporaryDirectory() as tmp:
        planted, controls = variants(scripts, Path(tmp))
        findings = lint([*planted, *controls, *clean])
        codes_of: dict[Path, set[str]] = defaultdict(set)
        for variant, original in planted.items():
            codes_of[original] |= {v.code for v in findings.get(variant, [])}
        rows = [(p, v) for p in clean for v in findings.get(p.resolve(), [])]
        rows += [(controls[p], v) for p in sorted(controls) for v in findings.get(p, [])]

    per_rule, misses, uncovered = recall(scripts, codes_of)
    total = sum(c["planted"] for c in per_rule.values())
    found = sum(c["found"] for c in per_rule.values())
    print(f"{len(scripts)} planted scripts, {len(clean)} clean scripts")
    print(f"recall where a lint rule covers the problem: {found}/{total} = {found / total:.0%}")
    print(f"\n{'lint code(s)':22} {'planted':>8} {'found':>6} {'recall':>7}")
    for key in sorted(per_rule):
        c = per_rule[key]
        print(f"{key:22} {c['planted']:8d} {c['found']:6d} {c['found'] / c['planted']:7.0%}")
    print("\nmisses:")
    for path, code, key in misses:
        print(f"  {path} {code} (expected {key})")
    print("\nsource-visible problems with no lint rule (planted scripts):")
    for code, count in sorted(uncovered.items()):
        print(f"  {code} x{count}: {UNCOVERED[code]}")
    print(
        f"\nfindings on controls ({len(clean)} clean scripts, {len(controls)} --fixed "
        f"controls): {len(rows)}"
    )
    for path, violation in rows:
        where = path.relative_to(path.parents[1])
        print(f"  {where}:{violation.line} {violation.code} {violation.message[:90]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
