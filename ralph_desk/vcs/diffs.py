"""Diffs of a task: its branch against the base, or one session's commits; renames found, binaries marked.

Binary means a NUL byte in a file's first 8,000 bytes, whatever attributes or drivers say (vcs.binaries).

Every diff is between object ids read once from full ref names (`refs/heads/…`): a tag named like a branch
cannot change what is shown, and the ids read are the pin that approving the diff merges.
"""

from __future__ import annotations

import re
from pathlib import Path

from ralph_desk.domain.diffs import CONTEXT_LINES, MAX_CONTEXT_LINES
from ralph_desk.domain.reviews import ReviewPin
from ralph_desk.vcs import binaries
from ralph_desk.vcs.places import GitError
from ralph_desk.vcs.run import run

# No external diff or text conversion programs (a hostile repository could name any), no colour, and
# every path from the top of the repository whatever `diff.relative` says; full blob ids on `index` lines.
OPTIONS = (
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--no-relative",
    "--find-renames",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "--full-index",
)
RULES_FOLDER = ".ralph"

_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def is_oid(value: str) -> bool:
    """Whether `value` is a full object id (40 or 64 lowercase hex digits)."""
    return isinstance(value, str) and _OID.fullmatch(value) is not None


def _oid(value: str) -> str:
    if not is_oid(value):
        raise GitError(("diff",), 2, f"{value!r} is not a full object id")
    return value


def branch_tip(repo: Path, branch: str) -> str | None:
    """The commit `refs/heads/<branch>` points at, exactly that ref (no tag, no revision syntax), or None."""
    ref = f"refs/heads/{branch}"
    found = run(repo, "show-ref", "--verify", "--end-of-options", ref, ok_codes=(0, 128))  # 128: no such ref
    words = found.stdout.split()
    if found.returncode != 0 or words[1:2] != [ref] or not is_oid(words[0]):
        return None
    peeled = run(
        repo,
        "rev-parse",
        "--verify",
        "--quiet",
        "--end-of-options",
        f"{words[0]}^{{commit}}",
        ok_codes=(0, 1),
    )
    commit = peeled.stdout.strip()
    return commit if is_oid(commit) else None


def pin(repo: Path, base: str, branch: str) -> ReviewPin:
    """The commits a review of `branch` shows: its merge base with `base`, and its tip (GitError if none)."""
    base_tip, tip = branch_tip(repo, base), branch_tip(repo, branch)
    if base_tip is None or tip is None:
        missing = base if base_tip is None else branch
        raise GitError(("show-ref",), 1, f"the branch {missing!r} does not exist")
    found = run(repo, "merge-base", "--end-of-options", base_tip, tip, ok_codes=(0, 1)).stdout.strip()
    if not is_oid(found):
        raise GitError(("merge-base",), 1, f"the branch {branch!r} shares no history with {base!r}")
    return ReviewPin(found, tip)


def between(repo: Path, older: str, newer: str, context: int = CONTEXT_LINES) -> str:
    """The unified diff from commit `older` to `newer`, both full object ids (binary files marked), with
    `context` unchanged lines around each change."""
    shown = _diff(repo, older, newer, context=context)
    if binaries.BINARY_MARK not in shown:
        return shown
    return _binaries_checked(repo, older, newer, shown, context)


def _binaries_checked(repo: Path, older: str, newer: str, shown: str, context: int = CONTEXT_LINES) -> str:
    """`shown` with each file git marked binary but whose blobs hold no NUL byte shown again as text."""
    pieces = binaries.sections(shown)
    marked = {index: blobs for index, piece in enumerate(pieces) if (blobs := binaries.marked_blobs(piece))}
    text = binaries.text_blobs(repo, (oid for blobs in marked.values() for oid in blobs))
    masked = [index for index, blobs in marked.items() if set(blobs) <= text]
    if not masked:
        return shown
    paths = dict.fromkeys(path for index in masked for path in binaries.paths(pieces[index]))
    # Only these files, as text: a real binary elsewhere in the diff stays marked, not dumped.
    pathspecs = tuple(f":(top,literal){path}" for path in paths)
    as_text = {
        binaries.key(piece): piece
        for piece in binaries.sections(_diff(repo, older, newer, as_text=pathspecs, context=context))
    }
    for index in masked:
        pieces[index] = as_text.get(binaries.key(pieces[index]), pieces[index])
    return "".join(pieces)


def _diff(
    repo: Path, older: str, newer: str, as_text: tuple[str, ...] = (), context: int = CONTEXT_LINES
) -> str:
    """`git diff` with the desk's options from commit `older` to `newer`; with `as_text` pathspecs, only
    those files, each shown as text."""
    text = ("--text",) if as_text else ()
    lines = max(0, min(int(context), MAX_CONTEXT_LINES))
    ends = ("--end-of-options", _oid(older), _oid(newer), "--")
    return run(repo, "diff", *OPTIONS, f"--unified={lines}", *text, *ends, *as_text).stdout


def of_pin(repo: Path, pinned: ReviewPin, context: int = CONTEXT_LINES) -> str:
    """What the pinned branch changed since it left the base (the diff the review shows)."""
    return between(repo, pinned.base, pinned.tip, context)


def files_between(repo: Path, older: str, newer: str) -> list[str]:
    """The paths (from the top of the repository) changed from commit `older` to `newer`."""
    listing = run(
        repo,
        "diff",
        "--name-only",
        "-z",
        "--no-renames",
        "--no-relative",
        "--no-ext-diff",
        "--end-of-options",
        _oid(older),
        _oid(newer),
        "--",
    ).stdout
    return [path for path in listing.split("\0") if path]


def rules_changed(repo: Path, pinned: ReviewPin) -> tuple[str, ...]:
    """The paths the pinned branch changes in the project's `.ralph/`, that folder itself, or a folder above
    it (made a link or a file): the desk's rules, which a task branch may not change."""
    prefix = run(repo, "rev-parse", "--show-prefix").stdout.strip()
    rules = f"{prefix}{RULES_FOLDER}"
    return tuple(
        path
        for path in files_between(repo, pinned.base, pinned.tip)
        if path == rules or path.startswith(f"{rules}/") or rules.startswith(f"{path}/")
    )
