"""A commit per session on the task branch: what the session left uncommitted, with trailers naming it."""

from __future__ import annotations

from pathlib import Path

from ralph_desk.vcs.run import agent_identity, is_ancestor, run

SUBJECT_LIMIT = 72
BODY_LIMIT = 2000
# The project's own state never goes onto a task branch.
PATHSPEC = (".", ":(exclude).ralph")


def message(task_id: int, title: str, verb: str | None, summary: str | None, session_id: str) -> str:
    """`Task #7: Title`, the closing verb's words, then the Ralph-Task and Ralph-Session trailers."""
    subject = " ".join(f"Task #{task_id}: {title}".split())
    if len(subject) > SUBJECT_LIMIT:
        subject = subject[: SUBJECT_LIMIT - 1] + "…"
    said = (summary or "").strip()[:BODY_LIMIT]
    body = f"{verb}: {said}" if verb and said else (verb or said)
    parts = [subject, body] if body else [subject]
    parts.append(f"Ralph-Task: {task_id}\nRalph-Session: {session_id}")
    return "\n\n".join(parts) + "\n"


def has_changes(worktree: Path) -> bool:
    """Whether the worktree holds anything uncommitted (outside `.ralph/`)."""
    listing = run(worktree, "status", "--porcelain", "--untracked-files=all", "--", *PATHSPEC).stdout
    return bool(listing.strip())


def in_merge(worktree: Path) -> bool:
    """Whether a merge is under way in the worktree (its conclusion is a merge commit)."""
    return run(worktree, "rev-parse", "--verify", "--quiet", "MERGE_HEAD", ok_codes=(0, 1)).returncode == 0


def commit_all(worktree: Path, text: str) -> tuple[str, str | None] | None:
    """Commit everything uncommitted as the ralph-desk agent: (the new commit, its first parent), or None."""
    if not has_changes(worktree) and not in_merge(worktree):
        return None
    run(worktree, "add", "--all", "--", *PATHSPEC)
    run(
        worktree,
        "commit",
        "--quiet",
        "--no-verify",
        "--allow-empty",
        "-F",
        "-",
        env=agent_identity(),
        stdin=text,
    )
    heads = run(worktree, "rev-parse", "HEAD", "HEAD^", ok_codes=(0, 128)).stdout.split()
    return heads[0], heads[1] if len(heads) > 1 else None


def head(worktree: Path) -> str | None:
    """The commit the worktree stands on."""
    result = run(worktree, "rev-parse", "--verify", "--quiet", "HEAD", ok_codes=(0, 1))
    return result.stdout.strip() or None


def stash_all(worktree: Path, text: str) -> bool:
    """Put every uncommitted change (untracked files too) aside in a stash named `text`; True if any was."""
    if not has_changes(worktree):
        return False
    run(worktree, "stash", "push", "--quiet", "--include-untracked", "-m", text, "--", *PATHSPEC)
    return True


def catch_up(worktree: Path, base: str) -> tuple[str, ...]:
    """Merge a base that moved on into the task branch; the files left with conflict markers, if any.

    Nothing happens while the worktree has uncommitted work or a merge under way: the session's commit
    concludes those first.
    """
    if is_ancestor(worktree, f"refs/heads/{base}", "HEAD") or in_merge(worktree) or has_changes(worktree):
        return ()
    # By name, so that the conflict markers say which side is the base.
    merged = run(worktree, "merge", "--no-edit", "--quiet", base, env=agent_identity(), ok_codes=(0, 1))
    if merged.returncode == 0:
        return ()
    listing = run(worktree, "diff", "--name-only", "-z", "--diff-filter=U").stdout
    return tuple(path for path in listing.split("\0") if path)
