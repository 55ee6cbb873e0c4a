"""When out of memory stops every ablation row, tune says so instead of naming a winner (QA3 F12)."""

import json
import os
import subprocess
import sys


def test_tune_where_no_configuration_fits_makes_no_speed_claim(tmp_path):
    report_path = tmp_path / "tune.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "torchdoctor",
            "tune",
            "shapes",
            "-o",
            "n_train=20",
            "-o",
            "n_val=5",
            "-o",
            "image_size=16",
            "--steps",
            "1",
            "--warmup",
            "1",
            "--no-worker-sweep",
            "--memory-cap",
            "1",
            "--stages",
            "amp",
            "--json",
            str(report_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "TORCHDOCTOR_CACHE": str(tmp_path / "cache")},
    )
    output = result.stdout + result.stderr
    assert "Traceback" not in output
    assert "baseline is fastest" not in output
    assert "no stack chosen: the baseline did not run" in output
    report = json.loads(report_path.read_text())
    assert report["chosen_stages"] == []
    assert any(
        note.startswith("no stack chosen: the baseline did not run") for note in report["notes"]
    )
