"""Which words of a changed line changed: the parts of a removed line and of the added line beside it
that differ, for the diff view to mark within the line (Qt-free)."""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from ralph_desk.domain.diffs import DiffLine, Hunk, LineKind, side_by_side

TOKEN = re.compile(r"\w+|\s+|[^\w\s]")
MAX_CHARS = 400
"""Longer lines are not compared word by word (a minified line would take long, and say little)."""
LEAST_IN_COMMON = 0.4
"""Below this share of characters (spaces aside) kept the lines are unrelated: marking would mark all."""

Span = tuple[int, int]
"""A range of characters of a line: start, end."""


def _starts(tokens: list[str]) -> list[int]:
    starts = [0]
    for token in tokens:
        starts.append(starts[-1] + len(token))
    return starts


def changed_spans(old: str, new: str) -> tuple[tuple[Span, ...], tuple[Span, ...]]:
    """The ranges of `old` and of `new` that differ, word by word (none when the lines share too little)."""
    if len(old) > MAX_CHARS or len(new) > MAX_CHARS:
        return (), ()
    before, after = TOKEN.findall(old), TOKEN.findall(new)
    matcher = SequenceMatcher(None, before, after, autojunk=False)
    kept = sum(
        len(token.strip())
        for tag, i1, i2, _j1, _j2 in matcher.get_opcodes()
        if tag == "equal"
        for token in before[i1:i2]
    )
    if kept < LEAST_IN_COMMON * max(len("".join(old.split())), len("".join(new.split())), 1):
        return (), ()
    old_at, new_at = _starts(before), _starts(after)
    old_spans: list[Span] = []
    new_spans: list[Span] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            old_spans.append((old_at[i1], old_at[i2]))
        if j2 > j1:
            new_spans.append((new_at[j1], new_at[j2]))
    return tuple(old_spans), tuple(new_spans)


def word_spans(hunk: Hunk) -> dict[int, tuple[Span, ...]]:
    """For each removed line and the added line beside it (as side by side pairs them), what changed in it;
    keyed by the line's identity within this hunk."""
    found: dict[int, tuple[Span, ...]] = {}
    for old, new in side_by_side(hunk):
        if old is None or new is None or old.kind is not LineKind.REMOVED or new.kind is not LineKind.ADDED:
            continue
        old_spans, new_spans = changed_spans(old.text, new.text)
        if old_spans or new_spans:
            found[id(old)] = old_spans
            found[id(new)] = new_spans
    return found


def spans_of(line: DiffLine | None, spans: dict[int, tuple[Span, ...]]) -> tuple[Span, ...]:
    """The changed ranges of `line` (none for a line without a partner, or for context)."""
    return spans.get(id(line), ()) if line is not None else ()
