"""What the desk hands git as a name: validated object ids and full task refs, never a short name."""

from __future__ import annotations

import re

BRANCH_REF_PREFIX = "refs/heads/"
TASK_REF_PREFIX = "refs/heads/ralph/"

_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
# git check-ref-format: no control characters, space, ~ ^ : ? * [ \ or DEL anywhere.
_FORBIDDEN = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]")


def is_object_id(text: object) -> bool:
    """Whether `text` is a full object id (40 or 64 lowercase hex digits)."""
    return isinstance(text, str) and _OBJECT_ID.fullmatch(text) is not None


def object_id(text: str) -> str:
    """`text` as a full object id (40 or 64 lowercase hex digits); ValueError otherwise."""
    if not is_object_id(text):
        raise ValueError(f"not a git object id (40 or 64 lowercase hex digits): {text!r}")
    return text


def branch_ref(ref: str) -> str:
    """`ref` as a full branch ref (`refs/heads/…`) that git's ref rules allow; ValueError otherwise."""
    return _checked(ref, BRANCH_REF_PREFIX, "branch")


def task_ref(ref: str) -> str:
    """`ref` as a full task branch ref (`refs/heads/ralph/…`) git's ref rules allow; ValueError otherwise."""
    return _checked(ref, TASK_REF_PREFIX, "task branch")


def _checked(ref: str, prefix: str, what: str) -> str:
    problem = _ref_problem(ref) if ref.startswith(prefix) else f"it does not start with {prefix}"
    if problem is not None:
        raise ValueError(f"not a {what} ref ({problem}): {ref!r}")
    return ref


def _ref_problem(ref: str) -> str | None:
    """What breaks git's ref rules in `ref` (None when nothing does)."""
    if _FORBIDDEN.search(ref):
        return "a control character, a space or one of ~ ^ : ? * [ \\"
    if ".." in ref or "@{" in ref:
        return "'..' or '@{'"
    if ref.endswith(("/", ".")):
        return "it ends with '/' or '.'"
    for part in ref.split("/"):
        if not part or part.startswith(".") or part.endswith(".lock"):
            return "an empty part, a part starting with '.' or ending with '.lock'"
    return None
