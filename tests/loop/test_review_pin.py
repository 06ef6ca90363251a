"""What a person approves is exactly what merges (issue 26, items 2 and 6), end to end: the real loop runs a
hostile stand-in agent that does its damage in its worktree with git, then calls done; the person reads the
diff and approves with the real `ralph-desk review` commands."""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.loop.model import LoopSettings
from ralph_desk.project import update_config
from ralph_desk.services.container import Services
from tests.loop.conftest import STAND_IN_WORDS, StartApi, heading, run_loop, session, settings, stand_in, verb
from tests.support.cli import ralph_desk_process
from tests.support.git_repo import commit_all, fsck_ok, git

AS_AGENT = "git -c user.name=agent -c user.email=agent@example.invalid"


def hostile(damage: str) -> LoopSettings:
    """The stand-in agent, after `damage` (shell words run in the task's worktree) did its harm — unconfined:
    these are the desk's defences where no sandbox stops git (tests/loop/test_sandbox_e2e.py has it on)."""
    script = f'{damage}; exec "$0" -I {shlex.quote(STAND_IN_WORDS[2])} "$1" "$2"'
    words = ["sh", "-c", script, sys.executable, "{prompt_file}", "{mcp_config}"]
    return replace(settings(stand_in()), agent_command=shlex.join(words), max_iterations=1, sandbox=False)


def review(root: Path, *args: str) -> tuple[int, str, str]:
    """`ralph-desk review ARGS` on the project, as the person types it."""
    done = ralph_desk_process("review", *args, "--root", str(root))
    return done.returncode, done.stdout, done.stderr


def approve_command(shown: str) -> list[str]:
    """The `review` command `review show` printed to approve exactly the diff it showed: its words after
    `ralph-desk review`."""
    (line,) = [line for line in shown.splitlines() if "approve exactly this diff: " in line]
    return line.split("approve exactly this diff: ralph-desk review ", 1)[1].split()


def files_in(diff: str) -> set[str]:
    """The files a unified diff shows (their new names)."""
    return {line.split(" b/", 1)[1] for line in diff.splitlines() if line.startswith("diff --git a/")}


@pytest.fixture
def gated(project: Services) -> Services:
    """The loop project with the review gate on, committed on the base as the person's own setting."""
    update_config(project.paths, review_gate=True)
    commit_all(project.paths.root, "review everything")
    return project


INNOCENT = (
    f"echo 'HARMLESS = 1' > harmless.py && {AS_AGENT} add harmless.py && {AS_AGENT} commit -qm harmless"
)


@pytest.mark.parametrize(
    "tag",
    [
        pytest.param('"$(git symbolic-ref --short HEAD)"', id="tag-named-like-the-branch"),
        pytest.param("BASE", id="tag-named-like-the-base"),
    ],
)
def test_a_tag_named_like_a_branch_cannot_hide_work_from_the_diff_that_approving_merges(
    gated: Services, start_api: StartApi, tag: str
) -> None:
    root = gated.paths.root
    task = gated.tasks.create("core", "backend", "Tidy the harbour")
    tree = gated.workspaces.prepare(task.id, task.title)
    assert tree is not None
    base = tree.base
    # The agent commits something harmless and tags it with the branch's (or the base's) name, then its
    # real session writes what the tag was meant to hide.
    start_api(
        **{
            heading(task.id): session(
                ("Write", {"file_path": str(tree.path / "evil.py"), "content": "PWN = 1\n"}),
                verb("done", summary="tidied"),
            )
        }
    )

    run_loop(gated, hostile(f"{INNOCENT} && {AS_AGENT} tag {tag.replace('BASE', tree.base)} HEAD"))

    assert gated.tasks.get(task.id).status is TaskStatus.IN_REVIEW
    code, shown, err = review(root, "show", str(task.id))
    assert code == 0, err
    assert files_in(shown) == {"harmless.py", "evil.py"}  # today: the tag hid one of them
    before = git(root, "rev-parse", f"refs/heads/{base}")

    code, _, err = review(root, *approve_command(shown))

    assert code == 0, err
    after = git(root, "rev-parse", f"refs/heads/{base}")
    assert set(git(root, "diff", "--name-only", before, after).split()) == files_in(shown)
    assert gated.tasks.get(task.id).status is TaskStatus.DONE and fsck_ok(root)


def test_a_branch_that_moved_after_its_diff_was_read_is_not_merged_and_its_new_tip_is_named(
    gated: Services, start_api: StartApi
) -> None:
    root = gated.paths.root
    task = gated.tasks.create("core", "backend", "Chart the tides")
    tree = gated.workspaces.prepare(task.id, task.title)
    assert tree is not None
    base = tree.base
    start_api(
        **{
            heading(task.id): session(
                ("Write", {"file_path": str(tree.path / "tides.py"), "content": "HIGH = 2\n"}),
                verb("done", summary="charted"),
            )
        }
    )
    run_loop(gated, settings(stand_in(), max_iterations=1))
    code, shown, _ = review(root, "show", str(task.id))
    assert code == 0 and files_in(shown) == {"tides.py"}
    (tree.path / "later.py").write_text("import os\n")  # the branch moves while the person reads
    git(tree.path, "add", "later.py")
    git(tree.path, "commit", "-qm", "later")
    moved = git(root, "rev-parse", f"refs/heads/{tree.branch}")
    before = git(root, "rev-parse", f"refs/heads/{base}")

    code, _, err = review(root, *approve_command(shown))

    assert code == 1 and f"it is at {moved} now" in err and f"ralph-desk review show {task.id}" in err
    assert git(root, "rev-parse", f"refs/heads/{base}") == before
    assert gated.tasks.get(task.id).status is TaskStatus.IN_REVIEW and gated.reviews.queued(task.id) is None
    code, again, _ = review(root, "show", str(task.id))
    assert files_in(again) == {"tides.py", "later.py"} and approve_command(again)[-1] == moved


FLIP_GATE = (
    'sed -i \'s/"review_gate": true/"review_gate": false/\' .ralph/config.json && '
    f"{AS_AGENT} add -f .ralph/config.json && {AS_AGENT} commit -qm 'no more reviews'"
)


def test_a_branch_that_turns_the_review_gate_off_in_ralph_config_is_refused_and_the_gate_stays_on(
    gated: Services, start_api: StartApi
) -> None:
    root = gated.paths.root
    config = (root / ".ralph" / "config.json").read_text()
    assert json.loads(config)["review_gate"] is True
    first = gated.tasks.create("core", "backend", "Raise the sea wall")
    tree = gated.workspaces.prepare(first.id, first.title)
    assert tree is not None
    base = tree.base
    start_api(
        **{
            heading(first.id): session(
                ("Write", {"file_path": str(tree.path / "wall.py"), "content": "WALL = 3\n"}),
                verb("done", summary="raised"),
            )
        }
    )
    run_loop(gated, hostile(FLIP_GATE))
    assert gated.tasks.get(first.id).status is TaskStatus.IN_REVIEW
    assert '"review_gate": false' in git(root, "show", f"refs/heads/{tree.branch}:.ralph/config.json")

    # The review shows the rule change as its own flagged part; approving it is refused, naming it.
    code, shown, _ = review(root, "show", str(first.id))
    assert code == 0 and "FLAGGED: the branch changes the project's rules under .ralph/" in shown
    assert ".ralph/config.json" in shown.split("FLAGGED", 1)[1].splitlines()[0]
    assert gated.reviews.get(first.id).rules_changed == (".ralph/config.json",)
    code, _, err = review(root, *approve_command(shown))
    assert code == 1 and ".ralph/config.json" in err and "remove those changes from the branch" in err
    assert (root / ".ralph" / "config.json").read_text() == config
    assert json.loads(git(root, "show", f"refs/heads/{base}:.ralph/config.json"))["review_gate"] is True
    assert gated.tasks.get(first.id).status is TaskStatus.IN_REVIEW

    # The next task still waits for a person.
    second = gated.tasks.create("core", "backend", "Paint the lighthouse")
    other = gated.workspaces.prepare(second.id, second.title)
    assert other is not None
    start_api(
        **{
            heading(second.id): session(
                ("Write", {"file_path": str(other.path / "paint.py"), "content": "RED = 1\n"}),
                verb("done", summary="painted"),
            )
        }
    )
    run_loop(gated, settings(stand_in(), max_iterations=1))
    assert gated.tasks.get(second.id).status is TaskStatus.IN_REVIEW
    assert not (root / "paint.py").exists()
