"""A project on a read-only folder is reported as read-only, never as damaged."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ralph_desk.cli import main
from ralph_desk.demo import create_demo
from ralph_desk.project import is_read_only, validate_project


@pytest.fixture
def read_only_project(tmp_path: Path) -> Iterator[Path]:
    """A demo project whose folder cannot be written: by permissions, or (as root) a read-only mount."""
    source = create_demo(tmp_path / "source" / "demo").root
    if os.geteuid() != 0:
        folders = [source, *[path for path in source.rglob("*") if path.is_dir()]]
        for folder in folders:
            folder.chmod(0o555)
        yield source
        for folder in folders:
            folder.chmod(0o755)
        return
    mounted = tmp_path / "mounted"
    mounted.mkdir()
    mount = shutil.which("mount")
    bound = (
        mount is not None
        and subprocess.run([mount, "--bind", str(source.parent), str(mounted)]).returncode == 0
    )
    if not bound:
        pytest.skip("running as root without permission to mount a read-only folder")
    try:
        subprocess.run([mount, "-o", "remount,ro,bind", str(mounted)], check=True)
        yield mounted / "demo"
    finally:
        subprocess.run(["umount", str(mounted)], check=True)


def test_validate_says_read_only_and_not_damaged(read_only_project: Path) -> None:
    problems = validate_project(read_only_project)

    assert is_read_only(problems)
    assert "read-only" in str(problems[0]) and "nothing is damaged" in str(problems[0])
    assert not any(
        "damaged" in problem.message or "unreadable" in problem.message for problem in problems[1:]
    )


def test_a_command_on_a_read_only_project_says_read_only(
    read_only_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["status", "--root", str(read_only_project)])

    err = capsys.readouterr().err
    assert code == 2
    assert "read-only" in err and "unreadable" not in err
