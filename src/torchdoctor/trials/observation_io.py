"""Read a RunObservation back from its JSON form (`asdict`), so a trial worker can see what
the diagnosis observed (e.g. where evaluation forwards were called)."""

from __future__ import annotations

import dataclasses
import json
import types
import typing

from torchdoctor.diagnose.observations import RunObservation


def from_dict(cls, data):
    """Rebuild dataclass `cls` (recursively) from `data`; unknown keys are ignored."""
    if data is None or not dataclasses.is_dataclass(cls):
        return data
    hints = typing.get_type_hints(cls)
    values = {}
    for item in dataclasses.fields(cls):
        if item.name in data:
            values[item.name] = _convert(hints[item.name], data[item.name])
    return cls(**values)


def _convert(hint, value):
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        inner = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        return _convert(inner[0], value) if len(inner) == 1 and value is not None else value
    if origin is list and value is not None:
        (item_type,) = typing.get_args(hint) or (object,)
        return [_convert(item_type, v) for v in value]
    if origin is tuple and value is not None:
        return tuple(value)
    if dataclasses.is_dataclass(hint):
        return from_dict(hint, value)
    return value


def dump_run_observation(run: RunObservation, path: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(dataclasses.asdict(run), handle)


def load_run_observation(path: str) -> RunObservation:
    with open(path, encoding="utf-8") as handle:
        return from_dict(RunObservation, json.load(handle))
