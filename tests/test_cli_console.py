"""The console our reports print through (torchdoctor/console.py)."""

from __future__ import annotations

import io

from torchdoctor import console


def test_a_stream_that_cannot_encode_our_characters_gets_them_spelled_in_ascii(monkeypatch):
    # a program's `sys.stdout.reconfigure(encoding="ascii")` (or a latin-1 terminal) must not
    # cost the report a UnicodeEncodeError at its first "µs"
    written = io.BytesIO()
    ascii_stdout = io.TextIOWrapper(written, encoding="ascii", errors="strict")
    monkeypatch.setattr("sys.stdout", ascii_stdout)
    console.make_console().print("forward 12.5 µs → 4× faster ≈ 3 ✓", markup=False)
    ascii_stdout.flush()
    assert written.getvalue().decode("ascii").strip() == "forward 12.5 us -> 4x faster ~ 3 ?"
