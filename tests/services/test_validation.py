"""The services' checks of a single value: the tools' own types, refused naming the field and the rule."""

from __future__ import annotations

import pytest

from ralph_desk.domain.enums import Severity
from ralph_desk.domain.tools import Text, TextList
from ralph_desk.services import validation as check
from ralph_desk.services.errors import InvalidValueError


def test_a_value_of_a_tool_type_is_returned_as_that_type() -> None:
    assert check.value(Severity, "severity", "warning") is Severity.WARNING
    assert check.value(TextList, "tags", ["a", "b"]) == ["a", "b"]


@pytest.mark.parametrize(
    ("kind", "given", "message"),
    [
        (Text, "x" * 20_001, "invalid body: '<20001 characters>'; allowed: at most 20000 characters"),
        (Text, 5, "invalid body: 5; allowed: a text"),
        (TextList, ["ok", ""], "invalid body[1]: ''; allowed: a non-empty text"),
        (Severity, "fatal", "invalid body: 'fatal'; allowed: one of info, warning, blocking"),
    ],
)
def test_a_bad_value_is_refused_naming_the_field_the_value_and_the_rule(
    kind: object, given: object, message: str
) -> None:
    with pytest.raises(InvalidValueError) as caught:
        check.value(kind, "body", given)
    assert str(caught.value) == message


@pytest.mark.parametrize("given", [0, -1, "3", 2.0, True, None, 2**31])
def test_a_positive_int_is_a_whole_number_not_a_look_alike(given: object) -> None:
    with pytest.raises(InvalidValueError) as caught:
        check.positive_int("task_id", given)
    assert str(caught.value) == f"invalid task_id: {given!r}; allowed: a whole number from 1 to 2147483647"
