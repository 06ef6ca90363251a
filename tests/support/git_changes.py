"""Real git repositories with changes of every kind, for the tests that read and show diffs."""

from __future__ import annotations

from pathlib import Path

from tests.support.git_repo import output as git

__all__ = ["big_change", "change_everything", "commit_base", "git"]


def commit_base(root: Path) -> Path:
    """A repository at `root` with one commit holding a few files of every kind."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q")
    (root / "tides.py").write_text("".join(f"line {n}\n" for n in range(1, 21)))
    (root / "old name.txt").write_text("".join(f"kept {n}\n" for n in range(1, 30)))
    (root / "gone.md").write_text("# Gone\n\nbye\n")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    (root / "dashes.txt").write_text("-- a\n--- b\nkeep\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


def change_everything(root: Path) -> str:
    """Edit, add, delete, rename, change a binary file (staged); return `git diff -M` against HEAD."""
    lines = [f"line {n}" for n in range(1, 21)]
    lines[2] = "line three"
    lines.insert(10, "inserted")
    del lines[17]
    (root / "tides.py").write_text("\n".join(lines))  # and no newline at the end
    (root / "old name.txt").rename(root / "new\tname.txt")
    (root / "gone.md").unlink()
    (root / "fresh.py").write_text("def fresh():\n    return 'hi'\n")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x01other")
    (root / "dashes.txt").write_text("keep\n")
    git(root, "add", "-A")
    return git(root, "diff", "-M", "--cached", "HEAD")


def big_change(root: Path, lines: int = 5000, files: int = 10) -> str:
    """Add `lines` lines of Python over `files` new files (staged); return the diff against HEAD."""
    per_file = lines // files
    for number in range(files):
        body = "".join(
            f"def tide_{number}_{n}(height: float) -> float:  # station {n}\n    return height * {n} + 0.5\n"
            for n in range(per_file // 2)
        )
        (root / f"harbour_{number}.py").write_text(body)
    git(root, "add", "-A")
    return git(root, "diff", "-M", "--cached", "HEAD")
