"""A stand-in for the `evaluate` metrics that Hugging Face example scripts load.

`evaluate.load("glue", "mrpc")` fetches the metric's code from the hub at run time, which the
machines that run the real-programs corpus cannot do; this package (put on PYTHONPATH by run.py
for the rows that need it, never by torchdoctor) computes the same numbers for the metrics those
scripts name: accuracy, and GLUE's accuracy + F1 (MRPC, QQP) or accuracy alone (the other tasks).
It is not `evaluate`: only enough for the scripts to run unmodified.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.0-standin"


def _values(batch: Any) -> list:
    return batch.tolist() if hasattr(batch, "tolist") else list(batch)


class Metric:
    def __init__(self, name: str, config: str | None) -> None:
        self.name, self.config = name, config
        self._predictions: list = []
        self._references: list = []

    def add_batch(self, *, predictions: Any, references: Any) -> None:
        self._predictions += _values(predictions)
        self._references += _values(references)

    def compute(self, *, predictions: Any = None, references: Any = None) -> dict[str, float]:
        if predictions is not None:
            self.add_batch(predictions=predictions, references=references)
        pairs = list(zip(self._predictions, self._references))
        self._predictions, self._references = [], []
        result = {"accuracy": sum(p == r for p, r in pairs) / max(len(pairs), 1)}
        if self.name == "f1" or self.config in ("mrpc", "qqp"):
            hits = sum(p == r == 1 for p, r in pairs)
            guessed, actual = sum(p == 1 for p, _ in pairs), sum(r == 1 for _, r in pairs)
            result["f1"] = 2 * hits / (guessed + actual) if guessed + actual else 0.0
        return result


def load(path: str, config_name: str | None = None, **_: Any) -> Metric:
    return Metric(path, config_name)
