"""A review comment the database cannot hold is refused by the service, naming the field, nothing written."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ralph_desk.services.container import Services
from ralph_desk.services.errors import InvalidValueError
from ralph_desk.services.reviews import CommentDraft
from tests.services.test_reviews import START, _work
from tests.support.review_project import open_review_project


@pytest.fixture
def desk(tmp_path: Path) -> Iterator[Services]:
    services = open_review_project(tmp_path / "repo", START, "Reviews")
    yield services
    services.close()


@pytest.mark.parametrize(
    ("text", "file", "line", "wrong", "allowed"),
    [
        ("keep \x00 this", None, None, "comment", "NUL"),
        ("lone \ud800 half", None, None, "comment", "lone surrogate"),
        ("x", "app\x00.py", None, "file", "NUL"),
        ("x", "app.py", 2**63, "line", f"a whole number from 1 to {2**31 - 1}"),
        ("x", "app.py", 2**31, "line", f"a whole number from 1 to {2**31 - 1}"),
        ("x", "app.py", -(2**63), "line", f"a whole number from 1 to {2**31 - 1}"),
    ],
    ids=["NUL body", "surrogate body", "NUL file", "line 2**63", "line 2**31", "line -2**63"],
)
def test_a_comment_the_database_cannot_hold_is_refused_naming_the_field(
    desk: Services, text: str, file: str | None, line: int | None, wrong: str, allowed: str
) -> None:
    task = _work(desk, "Greet", {"app.py": "new\n"})

    with pytest.raises(InvalidValueError, match=f"invalid {wrong}") as refused:
        desk.reviews.add_comment(task.id, text, file=file, line=line)
    assert allowed in str(refused.value)
    with pytest.raises(InvalidValueError, match=f"invalid {wrong}"):
        desk.reviews.request_changes(task.id, [CommentDraft(text, file, line)])
    assert desk.reviews.comments(task.id) == []


def test_an_edit_to_a_nul_is_refused_and_the_comment_keeps_its_text(desk: Services) -> None:
    task = _work(desk, "Greet", {"app.py": "new\n"})
    kept = desk.reviews.add_comment(task.id, "Rename greet", file="app.py", line=1)

    with pytest.raises(InvalidValueError, match=r"invalid comment.*NUL"):
        desk.reviews.edit_comment(kept.id, "Rename\x00greet")
    assert [c.body for c in desk.reviews.comments(task.id)] == ["Rename greet"]
