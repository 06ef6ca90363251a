"""Items a list could not read, as results: one shape for the data tools and the loop-control tools."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from ralph_desk.domain.listing import errors_of


class ItemErrorResult(BaseModel):
    """An item a list could not read (text written outside ralph-desk that is not UTF-8), left out of it."""

    model_config = ConfigDict(defer_build=True, from_attributes=True)

    id: int | str = Field(description="The item's id.")
    message: str = Field(description="What could not be read, and how to repair it.")


UNREADABLE = (
    "One entry per item that could not be read (its id and why); the list holds the others. "
    "Empty when every item read."
)


def item_errors(*lists: Sequence[object]) -> list[ItemErrorResult]:
    """The errors of lists of records, as results."""
    return [ItemErrorResult.model_validate(error) for items in lists for error in errors_of(items)]
