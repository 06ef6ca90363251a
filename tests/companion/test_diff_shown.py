"""A big diff is cut to fit a phone: every file still named, the lines left out counted, long lines cut."""

from __future__ import annotations

from ralph_desk.companion.diff_shown import shown
from ralph_desk.domain.diffs import parse_diff


def _diff(name: str, lines: int, width: int = 5) -> str:
    body = "".join(f"+{'x' * width}{n}\n" for n in range(lines))
    head = f"diff --git a/{name} b/{name}\nnew file mode 100644\n--- /dev/null\n+++ b/{name}\n"
    return f"{head}@@ -0,0 +1,{lines} @@\n{body}"


def test_a_diff_within_the_budget_is_shown_whole() -> None:
    diff = shown(parse_diff(_diff("a.py", 3)), max_lines=10)

    assert diff.left_out == 0 and [len(hunk.lines) for hunk in diff.files[0].hunks] == [3]


def test_past_the_budget_lines_are_left_out_and_counted_but_every_file_is_named() -> None:
    diff = shown(parse_diff(_diff("a.py", 8) + _diff("b.py", 5)), max_lines=10)

    assert [file.diff.path for file in diff.files] == ["a.py", "b.py"]
    assert [file.left_out for file in diff.files] == [0, 3]
    assert diff.left_out == 3 and (diff.added, diff.removed) == (13, 0)


def test_a_very_long_line_is_cut() -> None:
    diff = shown(parse_diff(_diff("a.py", 1, width=5000)), max_chars=100)

    (line,) = diff.files[0].hunks[0].lines
    assert len(line.text) == 100 and line.text.endswith("…")
