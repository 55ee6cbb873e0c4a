"""Screenshot an HTML report in a real headless Chromium (`make report-screenshot`).

Without arguments: diagnoses tests/diagnose/rules/scripts/d101_main_process_loading.py with
`--html`, then writes build/report.png. With `HTML PNG`: screenshots that page. The test suite
uses `screenshot()` too (tests/diagnose/test_diagnose_html.py, skipped without chromium).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def browser() -> str | None:
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def screenshot(html: Path, png: Path, width: int = 1000, height: int = 3200) -> None:
    """Render `html` offline in headless Chromium and write a `width` x `height` PNG."""
    chrome = browser()
    if chrome is None:
        raise SystemExit("no chromium found (Debian: apt-get install -y chromium)")
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                chrome, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                f"--user-data-dir={profile}", f"--screenshot={png}",
                f"--window-size={width},{height}", html.resolve().as_uri(),
            ],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
    if not png.is_file():
        raise SystemExit(f"chromium wrote no screenshot to {png}")


def main(argv: list[str]) -> None:
    if len(argv) == 2:
        screenshot(Path(argv[0]), Path(argv[1]))
        return
    out = ROOT / "build"
    out.mkdir(exist_ok=True)
    html = out / "report.html"
    script = ROOT / "tests" / "diagnose" / "rules" / "scripts" / "d101_main_process_loading.py"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "torchdoctor", "diagnose", "-q", "--steps", "8"]
    subprocess.run([*command, "--html", str(html), str(script)], check=True, env=env)
    screenshot(html, out / "report.png")
    print(f"{out / 'report.png'} (from {html})")


if __name__ == "__main__":
    main(sys.argv[1:])
