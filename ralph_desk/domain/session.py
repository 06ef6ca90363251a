"""A session's context: which recipe, discipline, feature and task it serves, and which tools it has."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ralph_desk.domain.enums import Recipe
from ralph_desk.domain.recipes import disabled_for, enabled_tools, hidden_reason
from ralph_desk.domain.text import STORABLE_WORDING, unstorable
from ralph_desk.domain.tools import MAX_SESSION_ID


def safe_file_stem(session_id: str) -> str:
    """A session id made safe to use as a file name (no separators, no leading dot)."""
    stem = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in session_id)[:120].lstrip(".")
    return stem or "session"


class ContextError(ValueError):
    """A session context that cannot be used; the server refuses to start on one (fail closed)."""


@dataclass(frozen=True)
class SessionContext:
    """What one MCP session may see and do (seed 000's context.json, DESIGN §2.3)."""

    recipe: Recipe = Recipe.IDE
    discipline: str | None = None
    feature: str | None = None
    task_id: int | None = None
    session_id: str | None = None
    discipline_disabled: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        # Checked here, at the start, not when the first verb stores it and is refused.
        session_id = self.session_id
        if session_id is None:
            return
        why = unstorable(session_id)
        if why is not None or not session_id.strip() or len(session_id) > MAX_SESSION_ID:
            raise ContextError(
                f"session_id {session_id[:40]!r}{'...' if len(session_id) > 40 else ''} is not allowed; "
                f"allowed: a non-empty text of at most {MAX_SESSION_ID} characters"
                + (f" ({STORABLE_WORDING}; this one holds {why})" if why else "")
            )

    @property
    def enabled_tools(self) -> frozenset[str]:
        """The recipe's tools minus what the discipline takes away."""
        return enabled_tools(self.recipe, self.discipline_disabled)

    def refusal(self, tool_name: str) -> str | None:
        """Why `tool_name` is hidden from this session (None when it is enabled)."""
        return hidden_reason(tool_name, self.recipe, self.discipline, self.discipline_disabled)

    def to_json(self) -> dict[str, Any]:
        """The context as written to `.ralph/mcp/context.json` (seed 000's shape, plus what we need)."""
        return {
            "session_id": self.session_id,
            "recipe": self.recipe.value,
            "discipline": self.discipline,
            "feature": self.feature,
            "task_id": self.task_id,
            "disabled_tools": disabled_for(self.recipe, self.discipline_disabled),
            "discipline_disabled_tools": sorted(self.discipline_disabled),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], source: str = "context") -> SessionContext:
        """Parse a context document, refusing anything malformed with a message naming the field."""
        if not isinstance(data, Mapping):
            raise ContextError(f"{source}: expected a JSON object, got {type(data).__name__}")
        recipe_value = data.get("recipe", Recipe.IDE.value)
        try:
            recipe = Recipe(recipe_value)
        except ValueError:
            allowed = ", ".join(r.value for r in Recipe)
            raise ContextError(f"{source}: recipe {recipe_value!r} is unknown; allowed: {allowed}") from None
        task_id = data.get("task_id")
        if task_id is not None and (isinstance(task_id, bool) or not isinstance(task_id, int) or task_id < 1):
            raise ContextError(f"{source}: task_id {task_id!r} must be a positive whole number or null")
        for key in ("discipline", "feature", "session_id"):
            if data.get(key) is not None and not isinstance(data.get(key), str):
                raise ContextError(f"{source}: {key} {data.get(key)!r} must be a text or null")
        disabled = data.get("discipline_disabled_tools", [])
        extra_disabled = data.get("disabled_tools", [])
        for key, value in (("discipline_disabled_tools", disabled), ("disabled_tools", extra_disabled)):
            if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
                raise ContextError(f"{source}: {key} must be a list of tool names")
        # A context file may only take tools away: its disabled list narrows the recipe further.
        narrowed = frozenset(disabled) | (frozenset(extra_disabled) & enabled_tools(recipe))
        return cls(
            recipe=recipe,
            discipline=data.get("discipline"),
            feature=data.get("feature"),
            task_id=task_id,
            session_id=data.get("session_id"),
            discipline_disabled=narrowed,
        )

    @classmethod
    def from_text(cls, text: str, source: str = "context") -> SessionContext:
        """Parse a context file's text."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise ContextError(f"{source}: not valid JSON ({error.msg} at line {error.lineno})") from None
        return cls.from_json(data, source)
