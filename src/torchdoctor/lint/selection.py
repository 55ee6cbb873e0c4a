"""Choosing rules by code or prefix (`--select TD1,TD115`, `--ignore TD110`)."""

from __future__ import annotations

from torchdoctor.errors import UsageError


def split_codes(value: str | None) -> list[str]:
    if not value:
        return []
    return [part.strip().upper() for part in value.split(",") if part.strip()]


def validate_codes(codes: list[str], known: list[str], origin: str) -> None:
    for code in codes:
        if code == "ALL":
            continue
        if not any(k.startswith(code) for k in known):
            raise UsageError(f"{origin}: unknown rule code or prefix {code!r}")


def matches(code: str, patterns) -> bool:
    return any(p == "ALL" or code.startswith(p) for p in patterns)


def select_rules(rules, select: list[str], ignore: list[str]):
    """Rules picked by `select` (all rules on by default when empty) minus those hit by
    `ignore`; the more specific pattern wins when both match (`--select TD1 --ignore TD10` keeps
    TD110). A rule off by default is picked only when `select` names its exact code."""
    chosen = []
    for rule in rules:
        if not rule.default_enabled:
            sel = [p for p in select if p == rule.code]
        elif select:
            sel = [p for p in select if p == "ALL" or rule.code.startswith(p)]
        else:
            sel = ["ALL"]
        ign = [p for p in ignore if p == "ALL" or rule.code.startswith(p)]
        if not sel:
            continue
        if ign and max(map(_specificity, ign)) >= max(map(_specificity, sel)):
            continue
        chosen.append(rule)
    return chosen


def _specificity(pattern: str) -> int:
    return 0 if pattern == "ALL" else len(pattern)
