"""A rule that raises on an unseen program costs its own findings and leaves a note; the report,
the other rules' findings and the exit code survive. Strict mode (tests, CI) re-raises."""

import pytest

from torchdoctor.diagnose.rules import all_rules
from torchdoctor.diagnose.rules_runner import STRICT_ENV

# A planted data-loading problem (slow __getitem__, num_workers=0) that D1xx rules report.
SCRIPT = """
class Slow(Dataset):
    def __len__(self):
        return 64
    def __getitem__(self, i):
        time.sleep(0.002)
        return torch.randn(8), torch.tensor(i % 2)
model = nn.Linear(8, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in DataLoader(Slow(), batch_size=8):
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def _broken(run):
    raise KeyError("field_that_does_not_exist")


def test_a_failing_rule_becomes_a_note_and_the_report_survives(diagnose_here, monkeypatch):
    victim = all_rules()[0]
    monkeypatch.setattr(victim, "check", _broken)
    monkeypatch.delenv(STRICT_ENV)
    report = diagnose_here(SCRIPT, steps=4, warmup=2)
    assert report.run.status == "stopped"
    failed = [n for n in report.run.notes if n.startswith(f"rule {victim.CODE} failed")]
    assert failed == [
        f"rule {victim.CODE} failed (KeyError: 'field_that_does_not_exist'): "
        "its findings are missing"
    ]
    assert report.findings, "the other rules still report the planted slow loader"
    assert victim.CODE not in {f.id for f in report.findings}
    assert report.verdict.startswith("data-loading bound")

    monkeypatch.setenv(STRICT_ENV, "1")
    with pytest.raises(KeyError, match="field_that_does_not_exist"):
        diagnose_here(SCRIPT, steps=4, warmup=2)
