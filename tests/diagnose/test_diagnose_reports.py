"""Reports from the CLI: JSON validated against the schema documented in docs/report-schema.md,
a self-contained HTML page, a Chrome trace with one event per phase per step, and --quiet."""

import json
import re
from pathlib import Path

from torchdoctor.diagnose.findings import ESTIMATE_DISCOUNT
from torchdoctor.diagnose.observations import PHASES

SCHEMA_DOC = Path(__file__).resolve().parents[2] / "docs" / "report-schema.md"

LOOP = """
data = TensorDataset(torch.randn(256, 20), torch.randint(0, 3, (256,)))
model = nn.Sequential(nn.Linear(20, 30), nn.BatchNorm1d(30), nn.ReLU(), nn.Linear(30, 3))
opt = torch.optim.Adam(model.parameters())
for epoch in range(100):
    for x, y in DataLoader(data, batch_size=16, shuffle=True):
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"loss {loss.item():.3f}")
print("finished all epochs")
"""


def _schema() -> dict:
    text = SCHEMA_DOC.read_text()
    block = re.search(r"## JSON Schema.*?```json\n(.*?)```", text, re.S).group(1)
    return json.loads(block)


_TYPES = {
    "object": dict, "array": list, "string": str, "boolean": bool, "null": type(None),
    "integer": int, "number": (int, float),
}  # fmt: skip


def validate(value, schema, path="$"):
    """The subset of JSON Schema the documented schema uses; raises AssertionError with a path."""
    if "enum" in schema:
        assert value in schema["enum"], f"{path}: {value!r} not in {schema['enum']}"
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        ok = any(
            isinstance(value, _TYPES[t]) and not (t in ("integer", "number") and value is True)
            for t in types
        )
        assert ok, f"{path}: {value!r} is not {types}"
    if isinstance(value, dict):
        for key in schema.get("required", []):
            assert key in value, f"{path}: missing {key!r}"
        for key, item in value.items():
            sub = schema.get("properties", {}).get(key, schema.get("additionalProperties"))
            if isinstance(sub, dict):
                validate(item, sub, f"{path}.{key}")
    if isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            validate(item, schema["items"], f"{path}[{index}]")


def test_validator_rejects_a_broken_report():
    schema = _schema()
    broken = {"schema_version": "0", "verdict": "x"}
    try:
        validate(broken, schema)
    except AssertionError:
        return
    raise AssertionError("a report with a wrong version and missing fields passed")


def test_json_html_trace_reports(diagnose, tmp_path):
    html_path, trace_path = tmp_path / "report.html", tmp_path / "trace.json"
    d = diagnose(
        LOOP, "--steps", "5", "--warmup", "2", "--html", str(html_path), "--trace", str(trace_path)
    )
    assert d.returncode == 0, d.stderr
    assert "finished all epochs" not in d.stdout  # stopped after the measured steps
    assert "verdict:" in d.stdout
    report = d.report
    validate(report, _schema())
    assert report["status"] == "stopped" and report["steps"] == 5
    assert abs(sum(report["breakdown"].values()) - 1) < 1e-6
    order = [  # an estimate counts 1/ESTIMATE_DISCOUNT of its size against measured savings
        (
            f["severity"] != "error",
            -round(
                f["saving"]["fraction"]
                / (1.0 if f["saving"]["basis"] == "measured" else ESTIMATE_DISCOUNT),
                3,
            ),
        )
        for f in report["findings"]
        if not (f["changes_semantics"] and f["severity"] == "info")
    ]
    assert order == sorted(order)  # errors first, then the largest saving
    # a suggestion that changes what is learned (a larger batch) never ranks above a problem
    severities = [f["severity"] for f in report["findings"]]
    for index, f in enumerate(report["findings"]):
        if f["changes_semantics"] and f["severity"] == "info":
            assert not {"warning", "error"} & set(severities[index + 1 :]), report["findings"]
    run = report["run"]
    assert run["models"][0]["batchnorm_layers"] == 1
    assert run["compute"]["flops_per_step"] > 0 and run["compute"]["ops_per_step"] > 0
    assert any(site["kind"] == "item" for site in run["sync_sites"])
    assert run["io"]["prints_per_step"] == 1
    assert all(
        f["saving"]["basis"] in ("measured", "estimated", "not measured")
        for f in report["findings"]
    )
    assert run["whatif"]["budget_s"] > 0  # the what-if probes ran (or say why they did not)

    page = html_path.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page
    assert report["verdict"].split(":")[0] in page
    assert not re.search(r"(src|href)\s*=|https?://|@import|url\(", page)  # nothing to fetch

    trace = json.loads(trace_path.read_text())
    phases = [e for e in trace["traceEvents"] if e.get("cat") == "phase"]
    steps = {e["name"]: e for e in trace["traceEvents"] if e.get("cat") == "step"}
    assert len(steps) == 5 and {"forward", "backward", "optimizer"} <= {e["name"] for e in phases}
    assert {e["name"] for e in phases} <= set(PHASES)
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in phases)
    # phases at their real times: inside their step, in time order, never overlapping
    for index in {e["args"]["step"] for e in phases}:
        step = steps[f"step {index}"]
        mine = [e for e in phases if e["args"]["step"] == index]
        assert all(step["ts"] - 1 <= e["ts"] <= step["ts"] + step["dur"] + 1 for e in mine)
        ends = [(e["ts"], e["ts"] + e["dur"]) for e in mine]
        assert all(a[1] <= b[0] + 1e-3 for a, b in zip(ends, ends[1:])), ends
    # real order, not the fixed phase order: LOOP calls zero_grad() (optimizer) before backward
    first = min(e["args"]["step"] for e in phases)
    order = [e["name"] for e in phases if e["args"]["step"] == first]
    assert order.index("forward") < order.index("optimizer") < order.index("backward"), order


def test_quiet_prints_only_the_verdict(diagnose):
    silent_loop = LOOP.replace('        print(f"loss {loss.item():.3f}")\n', "")
    d = diagnose(silent_loop, "-q", "--steps", "3")
    assert d.returncode == 0, d.stderr
    lines = d.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0] == f"verdict: {d.report['verdict']}"
