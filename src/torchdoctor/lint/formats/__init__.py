"""Renderers for lint results: text (default), json, sarif, github. Renderers only format;
every number they print was computed by the runner."""

from __future__ import annotations

FORMATS = ("text", "json", "sarif", "github")


def render(fmt: str, result, show_fixes_unsafe: bool = False, quiet: bool = False) -> str:
    if fmt == "json":
        from torchdoctor.lint.formats.json_format import render_json

        return render_json(result)
    if fmt == "sarif":
        from torchdoctor.lint.formats.sarif import render_sarif

        return render_sarif(result)
    if fmt == "github":
        from torchdoctor.lint.formats.github import render_github

        return render_github(result)
    from torchdoctor.lint.formats.text import render_text

    return render_text(result, unsafe=show_fixes_unsafe, quiet=quiet)
