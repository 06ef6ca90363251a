"""The untracked files a new worktree needs are copied in from the person's checkout: ignored ones only, never
over a file there."""

from __future__ import annotations

from pathlib import Path

from ralph_desk.services.worktree_files import copy_into


def test_an_ignored_file_is_copied_and_one_git_would_commit_is_not(tmp_path: Path) -> None:
    root, folder = tmp_path / "project", tmp_path / "worktree"
    root.mkdir()
    folder.mkdir()
    (root / ".env").write_text("SECRET=1\n")
    (root / "notes.txt").write_text("draft\n")

    notes = copy_into(
        root, folder, [".env", "notes.txt", "missing.txt"], lambda paths: {".env", "missing.txt"}
    )

    assert (folder / ".env").read_text() == "SECRET=1\n" and not (folder / "notes.txt").exists()
    assert notes == [
        "worktree_files: copied .env into the worktree",
        "worktree_files: notes.txt is not ignored by git, so a session would commit it: not copied",
    ]


def test_a_file_already_in_the_worktree_is_left_as_it_is(tmp_path: Path) -> None:
    root, folder = tmp_path / "project", tmp_path / "worktree"
    root.mkdir()
    folder.mkdir()
    (root / ".env").write_text("SECRET=new\n")
    (folder / ".env").write_text("SECRET=kept\n")
    asked: list[list[str]] = []

    notes = copy_into(root, folder, [".env"], lambda paths: asked.append(paths) or set(paths))

    assert (folder / ".env").read_text() == "SECRET=kept\n" and notes == [] and asked == []
