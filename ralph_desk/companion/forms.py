"""Reading the page's forms: a few text fields, never files (the gate caps the body at 64 KiB)."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.datastructures import FormData
from starlette.requests import Request

MAX_FIELDS = 60
YES = frozenset({"1", "on", "yes", "true"})


@dataclass(frozen=True)
class Fields:
    """A posted form's text fields."""

    data: FormData

    def text(self, name: str) -> str:
        """The field's text, stripped ("" when absent or not text)."""
        value = self.data.get(name)
        return value.strip() if isinstance(value, str) else ""

    def texts(self, name: str) -> list[str]:
        """Every value of a repeated field, stripped, in order."""
        return [value.strip() for value in self.data.getlist(name) if isinstance(value, str)]

    def chosen(self, name: str) -> bool:
        """Whether a checkbox or a button's value says yes."""
        return self.text(name).lower() in YES


async def read(request: Request) -> Fields:
    """The request's form (at most MAX_FIELDS fields, no files)."""
    return Fields(await request.form(max_files=0, max_fields=MAX_FIELDS))


def kept(form_id: str, fields: Fields, *names: str) -> dict[str, str]:
    """What was typed in a refused form, to show again as it was (`form_id:name` → text)."""
    return {f"{form_id}:{name}": fields.text(name) for name in names}
