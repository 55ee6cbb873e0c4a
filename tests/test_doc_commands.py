"""Every shell command that README.md and docs/ show is checked against the real CLI.

Commands come from shell code blocks, indented command lines and inline code spans. Each
`torchdoctor` command is parsed by the real click command (placeholders such as FILE or N are
replaced by a value of the option's type); `diagnose` commands must not hand one of torchdoctor's
own options to the program (the README once did). The cheap ones (lint, a short diagnose) then
run for real on a small script; `make` targets and `python -m torchdoctor.*` modules must exist.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from textwrap import dedent

import click
import pytest

from source_checkout import with_package_path
from torchdoctor.cli import SUBCOMMANDS, cli
from torchdoctor.cli.diagnose import misplaced_options

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
SHELL_FENCES = {"", "bash", "sh", "shell", "console"}
STARTS = ("torchdoctor ", "python -m torchdoctor", "torchrun ", "make ")
PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]*$")


@dataclass(frozen=True)
class DocCommand:
    where: str  # "docs/try.md:7"
    text: str
    inline: bool  # a code span in prose: a reference, possibly without its arguments

    def __str__(self) -> str:
        return f"{self.where}: {self.text}"


def _is_command(text: str) -> bool:
    """A command, not program output that starts with "torchdoctor demo: ..."."""
    if not text.startswith(STARTS):
        return False
    words = text.split()
    return words[0] != "torchdoctor" or len(words) == 1 or words[1] in SUBCOMMANDS


def _commands_in(line: str) -> list[str]:
    line = line.strip().removeprefix("$ ")
    return [part.strip() for part in line.split("&&") if _is_command(part.strip())]


def doc_commands() -> list[DocCommand]:
    found: list[DocCommand] = []
    for doc in DOCS:
        fence: str | None = None
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), start=1):
            where = f"{doc.relative_to(ROOT)}:{number}"
            stripped = line.strip()
            if stripped.startswith("```"):
                fence = None if fence is not None else stripped[3:].strip()
                continue
            if fence is not None:
                if fence in SHELL_FENCES:
                    found += [DocCommand(where, c, False) for c in _commands_in(line)]
                continue
            if line.startswith("    ") and not line.lstrip().startswith(("-", "|")):
                found += [DocCommand(where, c, False) for c in _commands_in(line)]
                continue
            for span in re.findall(r"`([^`]+)`", line):
                found += [DocCommand(where, c, True) for c in _commands_in(span)]
    return found


def _words(text: str) -> list[str]:
    return shlex.split(text, comments=True)


def _torchdoctor_args(words: list[str]) -> list[str] | None:
    """The arguments after `torchdoctor` (also `python -m torchdoctor`, `torchrun ... -m
    torchdoctor`); None for other commands."""
    if words[0] == "torchdoctor":
        return words[1:]
    if words[0] == "torchrun" and "..." in words:  # `torchrun ... diagnose --rank-dir DIR`
        return words[words.index("...") + 1 :]
    for index in range(len(words) - 1):
        if words[index] == "-m" and words[index + 1] == "torchdoctor":
            return words[index + 2 :]
    return None


def _value_for(param: click.Parameter) -> str:
    kind = param.type
    if isinstance(kind, click.Choice):
        return str(kind.choices[0])
    if isinstance(kind, (click.IntRange, click.FloatRange)) or kind in (click.INT, click.FLOAT):
        return "1"
    return "x"


def _concrete(command: click.Command, args: list[str]) -> list[str]:
    """Placeholders out: `[OPTIONS]` dropped, `--steps N` -> `--steps 1`, `json|sarif` -> `json`."""
    options = {name: p for p in command.params for name in getattr(p, "opts", ())}
    out: list[str] = []
    for arg in args:
        if arg.startswith("[") and arg.endswith("]"):
            continue
        previous = options.get(out[-1]) if out else None
        takes_value = previous is not None and not getattr(previous, "is_flag", False)
        if "|" in arg and not arg.startswith("-"):
            arg = arg.split("|")[0]
        if PLACEHOLDER.match(arg):
            arg = _value_for(previous) if takes_value and previous is not None else "x"
        out.append(arg)
    return out


def _subcommand(args: list[str]) -> tuple[click.Command, list[str]]:
    with click.Context(cli) as ctx:
        command = cli.get_command(ctx, args[0]) if args else None
    assert command is not None, f"no such subcommand: {args[:1]}"
    return command, args[1:]


def check_parses(doc: DocCommand) -> tuple[str, list[str]] | None:
    """Parse a torchdoctor command with the real CLI; (subcommand, args) when it is one."""
    words = _words(doc.text)
    if words[0] == "make":
        makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
        for target in words[1:]:
            assert re.search(rf"^{re.escape(target)}:", makefile, re.M), f"{doc}: no make target"
        return None
    args = _torchdoctor_args(words)
    if args is None:
        module = next(w for w in words if w.startswith("torchdoctor"))
        assert importlib.util.find_spec(module) is not None, f"{doc}: no module {module}"
        return None
    if not args or args[0].startswith("-"):
        return None  # `torchdoctor --help`-like: the group itself
    command, rest = _subcommand(args)
    rest = _concrete(command, rest)
    if doc.inline:  # a reference in prose: its options must exist, arguments may be left out
        known = {name for p in command.params for name in getattr(p, "opts", ())}
        known |= {"--help", "-h"}
        for arg in rest:
            if arg.startswith("-") and arg.split("=", 1)[0] not in known:
                if args[0] != "diagnose" or not _after_script(command, rest, arg):
                    pytest.fail(f"{doc}: {args[0]} has no option {arg}")
        return None
    try:
        ctx = command.make_context(args[0], list(rest))
    except click.ClickException as exc:  # our one-line usage errors are ClickExceptions too
        pytest.fail(f"{doc}: {exc.format_message()}")
    except Exception as exc:  # UsageError of ours (a TorchdoctorError)
        pytest.fail(f"{doc}: {exc}")
    if args[0] == "diagnose":
        program_args = list(ctx.params.get("args", ()))
        misplaced = misplaced_options(command, program_args)
        assert not misplaced, f"{doc}: {misplaced} go to the program, not to torchdoctor"
    return args[0], list(rest)


def _after_script(command: click.Command, args: list[str], option: str) -> bool:
    """In `diagnose`, an option after SCRIPT belongs to the program."""
    try:
        ctx = command.make_context("diagnose", list(args), resilient_parsing=True)
    except click.ClickException:
        return False
    return option in ctx.params.get("args", ())


COMMANDS = doc_commands()


def test_the_docs_show_commands_of_every_kind():
    """The extraction itself: it must find the commands the docs are known to show."""
    texts = [c.text for c in COMMANDS]
    assert len(COMMANDS) >= 40
    for start in ("torchdoctor diagnose", "torchdoctor lint", "torchdoctor train", "torchrun "):
        assert any(t.startswith(start) for t in texts), start
    assert any(c.where.startswith("README.md") and not c.inline for c in COMMANDS)


@pytest.mark.parametrize("doc", COMMANDS, ids=str)
def test_doc_command_parses_with_the_real_cli(doc):
    check_parses(doc)


def test_misplaced_option_in_a_doc_would_fail_the_check():
    """The README's old example, written the wrong way round, is caught."""
    wrong = DocCommand("x.md:1", "torchdoctor diagnose train.py --try workers,float32", False)
    with pytest.raises(AssertionError, match="go to the program"):
        check_parses(wrong)


TRAIN = dedent(
    """
    import argparse
    import torch
    from torch import nn

    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.01)
    lr = parser.parse_args().lr
    torch.manual_seed(0)
    model = nn.Linear(8, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    x, y = torch.randn(16, 8), torch.randint(0, 2, (16,))
    for step in range(40):
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    """
)


def _runnable(doc: DocCommand) -> bool:
    """Cheap enough to run for real here: lint, and diagnose without trials or torchrun."""
    if doc.inline:
        return False
    words = _words(doc.text)
    args = _torchdoctor_args(words)
    if words[0] != "torchdoctor" or not args or any(PLACEHOLDER.match(w) for w in args):
        return False
    if any(w.startswith("[") or "|" in w for w in args):
        return False
    return args[0] == "lint" or (args[0] == "diagnose" and "--try" not in args)


def test_cheap_doc_commands_run_for_real(tmp_path, monkeypatch):
    """lint in this process (it never imports torch); the diagnose runs as parallel processes."""
    from click.testing import CliRunner

    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    (tmp_path / "mypackage").mkdir()
    (tmp_path / "mypackage" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "mypackage" / "train.py").write_text(TRAIN, encoding="utf-8")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "loop.py").write_text(TRAIN, encoding="utf-8")
    runnable = [doc for doc in COMMANDS if _runnable(doc)]
    env = with_package_path({**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(tmp_path)})
    monkeypatch.chdir(tmp_path)
    failures, processes = [], []
    for doc in runnable:
        args = _torchdoctor_args(_words(doc.text)) or []
        if args[0] == "lint":
            result = CliRunner().invoke(cli, args)
            if (
                result.exit_code not in (0, 1)
                or result.exception is not None
                and not isinstance(result.exception, SystemExit)
            ):
                failures.append(f"{doc} -> exit {result.exit_code}: {result.output[-400:]}")
            continue
        command = [sys.executable, "-m", "torchdoctor", *args]
        processes.append(
            (
                doc,
                subprocess.Popen(
                    command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
                ),
            )
        )
    for doc, process in processes:
        _, stderr = process.communicate(timeout=120)
        if process.returncode != 0 or "Traceback" in stderr or "warning: " in stderr:
            failures.append(f"{doc} -> exit {process.returncode}: {stderr[-400:]}")
    assert not failures, "\n".join(failures)
    assert len(runnable) >= 8 and len(processes) >= 2, [str(d) for d in runnable]
    assert (tmp_path / "report.json").is_file()  # the README's --json example wrote its file
