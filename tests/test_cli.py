"""The top-level command: help, version, and one-line errors with usage exit codes."""

import subprocess
import sys

import torchdoctor


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "torchdoctor", *args], capture_output=True, text=True, timeout=120
    )


def test_help_lists_every_subcommand():
    result = run_cli("--help")
    assert result.returncode == 0, result.stderr
    for name in ("train", "demo", "diagnose", "lint", "tune"):
        assert name in result.stdout


def test_version_matches_package():
    result = run_cli("--version")
    assert result.returncode == 0
    assert torchdoctor.__version__ in result.stdout


def test_unknown_subcommand_is_a_usage_error_without_traceback():
    result = run_cli("no-such-command")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "no-such-command" in result.stderr
