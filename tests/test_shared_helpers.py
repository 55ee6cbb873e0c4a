"""Helpers shared by diagnose, --try, tune and the Trainer: one definition each."""

from __future__ import annotations

import os
import sys

import pytest

from torchdoctor.errors import UsageError
from torchdoctor.outputs import check_writable
from torchdoctor.process_memory import peak_rss_bytes


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_peak_rss_is_in_bytes_like_the_kernel_high_water_mark():
    status = open("/proc/self/status", encoding="utf-8").read()
    kib = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:"))
    measured = peak_rss_bytes()
    assert 0.9 * kib * 1024 <= measured <= 1.1 * kib * 1024 + 2**20


def test_an_output_in_a_missing_or_readonly_directory_is_refused_before_the_run(tmp_path):
    check_writable(tmp_path / "report.json")  # fine: nothing raised
    with pytest.raises(UsageError, match=r"--html .*: directory .* does not exist"):
        check_writable(tmp_path / "missing" / "report.html", "--html")
    readonly = tmp_path / "ro"
    readonly.mkdir(mode=0o500)
    if not os.access(readonly, os.W_OK):  # root can write anyway
        with pytest.raises(UsageError, match="is not writable"):
            check_writable(readonly / "r.json")


def test_ranks_checking_one_output_file_at_once_do_not_trip_on_each_other(tmp_path):
    """Every rank of a torchrun job checks the same --json path before its run: one rank may
    remove the file the other created (or the one it is about to remove) in between."""
    import subprocess

    target = tmp_path / "report.json"
    hammer = (
        "import sys\nfrom torchdoctor.outputs import check_writable\n"
        "for _ in range(400):\n    check_writable(sys.argv[1])\n"
    )
    ranks = [
        subprocess.Popen([sys.executable, "-c", hammer, str(target)], stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    errors = [rank.communicate(timeout=60)[1].decode() for rank in ranks]
    assert [rank.returncode for rank in ranks] == [0, 0], errors
    assert not target.exists()  # nobody's check leaves a file behind
