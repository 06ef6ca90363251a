"""Reading git's unified diffs: files, hunks, line numbers, +/− counts, renames and binary files."""

from __future__ import annotations

from pathlib import Path

import pytest

from ralph_desk.domain.diffs import FileChange, Gap, LineKind, gaps_of, parse_diff, side_by_side, unquote
from tests.support.git_changes import change_everything, commit_base, git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with one commit holding a few files of every kind."""
    return commit_base(tmp_path / "repo")


def test_a_real_git_diff_is_read_into_its_files_with_their_changes(repo: Path) -> None:
    files = {diff.path: diff for diff in parse_diff(change_everything(repo))}

    assert set(files) == {"tides.py", "new\tname.txt", "gone.md", "fresh.py", "logo.png", "dashes.txt"}
    assert files["fresh.py"].change is FileChange.ADDED and files["fresh.py"].old_path is None
    assert (files["fresh.py"].added, files["fresh.py"].removed) == (2, 0)
    assert files["gone.md"].change is FileChange.DELETED and files["gone.md"].new_path is None
    assert (files["gone.md"].added, files["gone.md"].removed) == (0, 3)
    renamed = files["new\tname.txt"]
    assert renamed.change is FileChange.RENAMED and renamed.old_path == "old name.txt"
    assert renamed.similarity == 100 and renamed.hunks == ()
    assert renamed.title == "old name.txt → new\tname.txt"
    assert files["logo.png"].binary and files["logo.png"].hunks == ()
    assert (files["dashes.txt"].added, files["dashes.txt"].removed) == (0, 2)
    assert [line.text for line in files["dashes.txt"].hunks[0].lines][:2] == ["-- a", "--- b"]


def test_line_numbers_follow_each_side_and_counts_match_git_numstat(repo: Path) -> None:
    diff = change_everything(repo)
    tides = next(file for file in parse_diff(diff) if file.path == "tides.py")
    numstat = git(repo, "diff", "--cached", "--numstat", "HEAD", "--", "tides.py").split()

    assert (tides.added, tides.removed) == (int(numstat[0]), int(numstat[1]))
    lines = [line for hunk in tides.hunks for line in hunk.lines]
    removed = next(line for line in lines if line.kind is LineKind.REMOVED)
    assert (removed.text, removed.old_no, removed.new_no) == ("line 3", 3, None)
    inserted = next(line for line in lines if line.text == "inserted")
    assert inserted.kind is LineKind.ADDED and inserted.new_no == 11
    assert lines[-1].kind is LineKind.NOTE and "No newline" in lines[-1].text
    for line in lines:
        if line.kind is LineKind.CONTEXT:
            assert line.text in (repo / "tides.py").read_text().split("\n")


def test_side_by_side_puts_each_removal_beside_its_addition_and_context_on_both_sides(repo: Path) -> None:
    tides = next(file for file in parse_diff(change_everything(repo)) if file.path == "tides.py")
    rows = side_by_side(tides.hunks[0])

    changed = next(row for row in rows if row[0] is not None and row[0].kind is LineKind.REMOVED)
    assert changed[0] is not None and changed[1] is not None
    assert (changed[0].text, changed[1].text) == ("line 3", "line three")
    context = next(row for row in rows if row[0] is not None and row[0].kind is LineKind.CONTEXT)
    assert context[0] is context[1]
    old_side = [row[0] for row in rows if row[0] is not None and row[0].kind is not LineKind.NOTE]
    assert [line.old_no for line in old_side] == sorted(line.old_no or 0 for line in old_side)


def test_a_hunk_of_only_additions_stands_on_the_new_side() -> None:
    text = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -0,0 +1,2 @@\n+one\n+two\n"
    (file,) = parse_diff(text)

    assert [(old, new.text if new else None) for old, new in side_by_side(file.hunks[0])] == [
        (None, "one"),
        (None, "two"),
    ]


def test_a_path_with_spaces_and_the_same_name_on_both_sides_is_read_whole() -> None:
    text = "diff --git a/my file b/my file\nindex 1..2 100644\nBinary files a/my file and b/my file differ\n"
    (file,) = parse_diff(text)

    assert (file.old_path, file.new_path, file.binary) == ("my file", "my file", True)


def test_quoted_paths_are_unquoted_including_octal_utf8() -> None:
    assert unquote('"caf\\303\\251 \\"x\\".txt"') == 'café "x".txt'
    assert unquote("plain.txt") == "plain.txt"


def test_a_mode_change_alone_is_a_file_without_hunks() -> None:
    text = "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
    (file,) = parse_diff(text)

    assert (file.old_mode, file.new_mode, file.hunks, file.added) == ("100644", "100755", (), 0)


def test_an_empty_diff_has_no_files() -> None:
    assert parse_diff("") == []


def test_the_gaps_of_a_file_are_the_lines_before_between_and_after_its_hunks() -> None:
    text = (
        "diff --git a/x b/x\n--- a/x\n+++ b/x\n"
        "@@ -5,7 +5,8 @@\n a\n b\n c\n-d\n+D\n+E\n e\n f\n g\n"
        "@@ -30,4 +31,3 @@\n p\n q\n r\n-s\n"
    )
    (file,) = parse_diff(text)

    # 1–4 before; 12–29 (old) between; the second hunk ends with the file (no context after its change)
    assert gaps_of(file) == [Gap(0, 1, 1, 4), Gap(1, 12, 13, 18)]
    three_after = text.replace("@@ -30,4 +31,3 @@", "@@ -30,7 +31,6 @@") + " t\n u\n v\n"
    assert gaps_of(parse_diff(three_after)[0])[-1] == Gap(2, 37, 37, None)  # maybe more: not known
    added = "diff --git a/y b/y\nnew file mode 100644\n--- /dev/null\n+++ b/y\n@@ -0,0 +1 @@\n+y\n"
    assert gaps_of(parse_diff(added)[0]) == []
