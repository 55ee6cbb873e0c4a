"""`# noqa` on a line and `# torchdoctor: noqa` for a file."""

from __future__ import annotations

from lint_helpers import codes, lint_text

LOAD = "import torch\n"


def test_line_noqa_with_code():
    source = LOAD + "m.load_state_dict(torch.load(p))  # noqa: TD110\n"
    assert codes(lint_text(source, select="TD11")) == ["TD111"]


def test_line_noqa_with_several_codes_and_bare():
    assert (
        codes(
            lint_text(
                LOAD + "m.load_state_dict(torch.load(p))  # noqa: TD110, TD111\n", select="TD11"
            )
        )
        == []
    )
    assert (
        codes(lint_text(LOAD + "m.load_state_dict(torch.load(p))  # noqa\n", select="TD11")) == []
    )


def test_noqa_for_another_code_does_not_suppress():
    assert codes(
        lint_text(LOAD + "m.load_state_dict(torch.load(p))  # noqa: TD101\n", select="TD110")
    ) == ["TD110"]


def test_noqa_inside_a_string_is_not_a_comment():
    source = LOAD + "m.load_state_dict(torch.load('# noqa'))\n"
    assert codes(lint_text(source, select="TD110")) == ["TD110"]


def test_file_level_noqa_all_and_some():
    body = "m.load_state_dict(torch.load(p))\nb = torch.nn.DataParallel(m)\n"
    assert codes(lint_text("# torchdoctor: noqa\n" + LOAD + body)) == []
    kept = codes(lint_text("# torchdoctor: noqa: TD110,TD111\n" + LOAD + body))
    assert kept == ["TD118"]


def test_suppressed_findings_are_not_fixed():
    source = LOAD + "m.load_state_dict(torch.load(p, map_location='cpu'))  # noqa: TD111\n"
    assert not lint_text(source, select="TD111", fix=True, unsafe=True).changed
