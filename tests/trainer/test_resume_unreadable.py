"""--resume over a directory whose checkpoints are all unreadable: a one-line error, files kept."""

import subprocess
import sys


def test_resume_refuses_when_every_checkpoint_is_corrupt_and_keeps_them(tmp_path):
    checkpoints = tmp_path / "ckpt"
    checkpoints.mkdir()
    corrupt = checkpoints / "ckpt-000000004.pt"
    corrupt.write_bytes(b"not a checkpoint")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "torchdoctor",
            "train",
            "checkerboard",
            "--quiet",
            "--resume",
            "--checkpoint-dir",
            str(checkpoints),
            "--max-steps",
            "1",
            "--workers",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "cannot resume" in result.stderr and "ckpt-000000004.pt" in result.stderr
    # the warning about the corrupt file is one line too, with no source excerpt of our code
    assert all(line.startswith("torchdoctor: ") for line in result.stderr.strip().splitlines())
    assert corrupt.read_bytes() == b"not a checkpoint"  # never deleted or overwritten
    assert sorted(p.name for p in checkpoints.iterdir()) == ["ckpt-000000004.pt"]
