"""Do lint's autofixes keep running programs running, computing the same losses?

For every planted diagnose script (tests/diagnose/rules/scripts/, runnable programs) that lint
offers a fix for, the bench applies the fixes to a copy (`--fix`, or with `--unsafe` the unsafe
ones too), runs the original and the copy for the first N backward passes (the same seeds: the
scripts seed themselves) and compares the loss of each pass. A safe fix must give the same losses;
an unsafe fix may change them (its Fix safety section says when), and the row says whether it did.

    OMP_NUM_THREADS=1 .venv/bin/python bench/lint_fix_safety.py [--unsafe] [--steps 8] [PATH ...]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "tests" / "diagnose" / "rules" / "scripts"

# runs a script until it has done N backward passes, recording each pass's loss
_RECORDER = """
import json, runpy, sys
import torch
script, out, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
losses = []
class Enough(BaseException):
    pass
original = torch.Tensor.backward
def backward(self, *args, **kwargs):
    losses.append(float(self.detach().double().sum()))
    original(self, *args, **kwargs)
    if len(losses) >= limit:
        raise Enough
torch.Tensor.backward = backward
sys.argv = [script]
try:
    runpy.run_path(script, run_name="__main__")
except Enough:
    pass
json.dump(losses, open(out, "w"))
"""


def run_losses(script: Path, steps: int, timeout: float) -> list[float] | str:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "losses.json"
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        done = subprocess.run(
            [sys.executable, "-c", _RECORDER, str(script.resolve()), str(out), str(steps)],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=script.parent,
            env=env,
        )
        if done.returncode != 0 or not out.exists():
            return (done.stderr.strip().splitlines() or ["no output"])[-1]
        return json.loads(out.read_text())


def fixed_copy(script: Path, unsafe: bool, tmp: Path) -> tuple[Path, list[str]] | None:
    from torchdoctor.lint.engine import lint_source
    from torchdoctor.lint.rules import all_rules

    source = script.read_text()
    result = lint_source(source, str(script), all_rules(), fix=True, unsafe=unsafe)
    if not result.changed or result.fixed_source is None:
        return None
    fixed_codes = sorted(
        {v.code for v in lint_source(source, str(script), all_rules()).violations if v.fix}
        - {v.code for v in result.violations if v.fix}
    )
    copy = tmp / script.name
    copy.write_text(result.fixed_source)
    return copy, fixed_codes


def same(a: list[float], b: list[float]) -> bool:
    return len(a) == len(b) and all(
        math.isclose(x, y, rel_tol=1e-6, abs_tol=1e-9) for x, y in zip(a, b)
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--unsafe", action="store_true", help="apply unsafe fixes too")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()
    scripts = args.paths or sorted(SCRIPTS.rglob("*.py"))
    rows, failures = 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for script in scripts:
            made = fixed_copy(script, args.unsafe, Path(tmp))
            if made is None:
                continue
            copy, codes = made
            before = run_losses(script, args.steps, args.timeout)
            after = run_losses(copy, args.steps, args.timeout)
            rows += 1
            where = script.relative_to(ROOT) if script.is_relative_to(ROOT) else script
            if isinstance(after, str):
                failures += 1
                verdict = f"BROKEN: {after}"
            elif isinstance(before, str):
                verdict = f"original does not run: {before}"
            else:
                verdict = "same losses" if same(before, after) else "losses differ"
                verdict += f" ({len(after)} backward passes)"
            print(f"{where}  fixes {','.join(codes)}: {verdict}")
    print(
        f"\n{rows} scripts fixed ({'safe and unsafe' if args.unsafe else 'safe'} fixes); "
        f"{failures} broken by the fix"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
