"""Learning de-duplication: near-duplicates (Jaccard ≥ 0.8 on word sets) raise a hit count instead."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TypeVar

DUPLICATE_THRESHOLD = 0.8
_WORD = re.compile(r"[a-z0-9_]+")

T = TypeVar("T")


def word_set(text: str) -> frozenset[str]:
    """The lower-cased words of a text."""
    return frozenset(_WORD.findall(text.lower()))


def jaccard(a: str, b: str) -> float:
    """Jaccard similarity of the word sets of two texts (1.0 for two texts without words)."""
    words_a, words_b = word_set(a), word_set(b)
    if not words_a and not words_b:
        return 1.0
    return len(words_a & words_b) / len(words_a | words_b)


def find_duplicate(text: str, existing: Iterable[tuple[T, str]]) -> T | None:
    """The key of the most similar existing text at or above the threshold, if any."""
    best_key: T | None = None
    best_score = DUPLICATE_THRESHOLD
    for key, other in existing:
        score = jaccard(text, other)
        if score >= best_score:
            best_key, best_score = key, score
    return best_key
