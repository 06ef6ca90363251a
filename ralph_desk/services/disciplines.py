"""Disciplines: kinds of work, with their persona, the tools they take away and their extra MCP servers."""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ralph_desk.domain.listing import Listing
from ralph_desk.domain.recipes import unknown_tools
from ralph_desk.domain.records import Discipline, McpServerSpec
from ralph_desk.domain.tools import (
    ACRONYM_PATTERN,
    MAX_ITEMS,
    MAX_TEXT,
    PATTERN_WORDING,
    REGISTRY,
    CreateDisciplineInput,
    TextList,
    UpdateDisciplineInput,
    closest_tools,
    in_registry_order,
)
from ralph_desk.project import trust
from ralph_desk.services import validation as check
from ralph_desk.services.errors import ConflictError, InvalidValueError, NotFoundError
from ralph_desk.services.inputs import Slug
from ralph_desk.store import disciplines as store
from ralph_desk.store.database import Database, UnitOfWork
from ralph_desk.store.writes import DisciplineWrite

UPDATABLE_FIELDS = (
    "display_name",
    "icon",
    "color",
    "acronym",
    "system_prompt",
    "skills",
    "conventions",
    "disabled_tools",
    "mcp_servers",
)
# The fields only the window sets (no tool's arguments have them).
EXTRAS = ("acronym", "disabled_tools", "mcp_servers")
# What None means in a plain update: the clearing value of update_discipline's argument.
CLEARED: dict[str, object] = {"system_prompt": "", "conventions": "", "skills": []}
RESERVED_SERVER_NAMES = frozenset({"ralph"})
SHOWN_TASKS = 20

_ACRONYM = re.compile(ACRONYM_PATTERN)
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_COMMAND_KEYS = frozenset({"command", "args", "env"})
_URL_KEYS = frozenset({"url", "headers"})
_SERVER_SHAPES = (
    "{'command': str, 'args': [str], 'env': {str: str}} or {'url': 'http(s)://…', 'headers': {str: str}}"
)


def _matching(field: str, value: Any, pattern: re.Pattern[str], allowed: str) -> str:
    if not isinstance(value, str) or not pattern.match(value):
        raise InvalidValueError(field, value, allowed)
    return value


def _acronym(value: Any) -> str | None:
    if value is None:
        return None
    return _matching("acronym", value, _ACRONYM, PATTERN_WORDING[ACRONYM_PATTERN])


def _disabled_tools(values: Sequence[str] | None) -> builtins.list[str]:
    """Registered tool names, without repeats, in registry order."""
    names: builtins.list[str] = check.value(TextList, "disabled_tools", values or [])
    unknown = unknown_tools(names)
    if unknown:
        close = closest_tools(unknown[0])
        hint = f" (did you mean: {', '.join(close)}?)" if close else ""
        raise InvalidValueError(
            "disabled_tools",
            unknown[0] if len(unknown) == 1 else unknown,
            f"names of registered tools{hint}; known: {', '.join(in_registry_order(REGISTRY))}",
        )
    return in_registry_order(names)


def _plain_text(field: str, value: Any, limit: int, required: bool = True) -> str:
    """A one-line text: no NUL, no line breaks."""
    if not isinstance(value, str) or (required and not value.strip()):
        raise InvalidValueError(field, value, "a non-empty text" if required else "a text")
    if len(value) > limit:
        raise InvalidValueError(field, f"<{len(value)} characters>", f"at most {limit} characters")
    if any(character in value for character in "\x00\r\n"):
        raise InvalidValueError(field, value, "one line of text without NUL characters")
    return value


def _string_map(field: str, value: Any, key_pattern: re.Pattern[str], key_allowed: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidValueError(field, value, "a mapping of text to text")
    if len(value) > MAX_ITEMS:
        raise InvalidValueError(field, f"<{len(value)} entries>", f"at most {MAX_ITEMS} entries")
    checked: dict[str, str] = {}
    for key, item in value.items():
        checked[_matching(f"{field} key", key, key_pattern, key_allowed)] = _plain_text(
            f"{field}[{key!r}]", item, limit=MAX_TEXT, required=False
        )
    return checked


def _args(field: str, value: Any) -> builtins.list[str]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InvalidValueError(field, value, "a list of texts")
    if len(value) > MAX_ITEMS:
        raise InvalidValueError(field, f"<{len(value)} items>", f"at most {MAX_ITEMS} items")
    return [
        _plain_text(f"{field}[{index}]", item, MAX_TEXT, required=False) for index, item in enumerate(value)
    ]


def _url(field: str, value: Any) -> str:
    url = _plain_text(field, value, limit=2000)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in url):
        raise InvalidValueError(field, value, "an http:// or https:// URL with a host")
    return url


def _spec_entry(spec: McpServerSpec) -> dict[str, Any]:
    """Every field a spec sets, so that a spec with both a command and a URL is refused, not trimmed."""
    entry: dict[str, Any] = {}
    if spec.command is not None or spec.args or spec.env:
        entry.update(command=spec.command, args=list(spec.args), env=dict(spec.env))
    if spec.url is not None or spec.headers:
        entry.update(url=spec.url, headers=dict(spec.headers))
    return entry


def _mcp_server(name: str, entry: Any) -> McpServerSpec:
    field = f"mcp_servers[{name!r}]"
    if isinstance(entry, McpServerSpec):
        entry = _spec_entry(entry)
    if not isinstance(entry, Mapping):
        raise InvalidValueError(field, entry, _SERVER_SHAPES)
    keys = {key for key, value in entry.items() if value is not None}
    kind = entry.get("type")
    keys.discard("type")
    unknown = sorted(str(key) for key in keys - _COMMAND_KEYS - _URL_KEYS)
    if unknown:
        raise InvalidValueError(f"{field} key", unknown[0], "command, args, env, url, headers or type")
    if ("command" in keys) == ("url" in keys):
        raise InvalidValueError(field, dict(entry), f"exactly one of 'command' or 'url': {_SERVER_SHAPES}")
    if "command" in keys:
        if keys - _COMMAND_KEYS:
            raise InvalidValueError(field, dict(entry), "a command server takes only command, args and env")
        if kind not in (None, "stdio"):
            raise InvalidValueError(f"{field}.type", kind, "'stdio' for a command server (or no type)")
        return McpServerSpec(
            name=name,
            command=_plain_text(f"{field}.command", entry["command"], limit=1000),
            args=tuple(_args(f"{field}.args", entry.get("args"))),
            env=_string_map(f"{field}.env", entry.get("env"), _ENV_NAME, "a variable name like API_KEY"),
        )
    if keys - _URL_KEYS:
        raise InvalidValueError(field, dict(entry), "an HTTP server takes only url and headers")
    if kind not in (None, "http"):
        raise InvalidValueError(f"{field}.type", kind, "'http' for a URL server (or no type)")
    return McpServerSpec(
        name=name,
        url=_url(f"{field}.url", entry["url"]),
        headers=_string_map(f"{field}.headers", entry.get("headers"), _HEADER_NAME, "an HTTP header name"),
    )


def _mcp_servers(value: Any) -> dict[str, dict[str, Any]]:
    """Extra MCP servers, by name, in the JSON form they are stored and handed to agents in."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        items = builtins.list(value.items())
    elif (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and all(isinstance(item, McpServerSpec) for item in value)
    ):
        items = [(spec.name, spec) for spec in value]
    else:
        raise InvalidValueError("mcp_servers", value, f"a mapping of server name to {_SERVER_SHAPES}")
    if len(items) > MAX_ITEMS:
        raise InvalidValueError("mcp_servers", f"<{len(items)} servers>", f"at most {MAX_ITEMS} servers")
    servers: dict[str, dict[str, Any]] = {}
    for name, entry in items:
        check.value(Slug, "mcp_servers name", name)
        if name in RESERVED_SERVER_NAMES:
            raise InvalidValueError(
                "mcp_servers name", name, "any name but 'ralph', which is ralph-desk's own server"
            )
        if name in servers:
            raise InvalidValueError("mcp_servers name", name, "each name once")
        servers[name] = _mcp_server(name, entry).to_json()
    return servers


def _columns(args: CreateDisciplineInput | UpdateDisciplineInput, names: Collection[str]) -> DisciplineWrite:
    """The discipline columns of the input's fields `names`: an empty text and a missing list clear theirs."""
    fields: DisciplineWrite = {}
    if "display_name" in names and args.display_name is not None:
        fields["display_name"] = args.display_name
    if "icon" in names and args.icon is not None:
        fields["icon"] = args.icon
    if "color" in names and args.color is not None:
        fields["color"] = args.color.lower()
    if "system_prompt" in names:
        fields["system_prompt"] = check.text_or_none(args.system_prompt)
    if "skills" in names:
        fields["skills"] = list(dict.fromkeys(args.skills or ()))
    if "conventions" in names:
        fields["conventions"] = check.text_or_none(args.conventions)
    return fields


def _extras(fields: DisciplineWrite, extras: Mapping[str, Any]) -> DisciplineWrite:
    """`fields` with the window's own fields checked in: acronym, disabled tools, extra MCP servers."""
    if "acronym" in extras:
        fields["acronym"] = _acronym(check.blank_is_none(extras["acronym"]))
    if "disabled_tools" in extras:
        fields["disabled_tools"] = _disabled_tools(extras["disabled_tools"])
    if "mcp_servers" in extras:
        fields["mcp_servers"] = _mcp_servers(extras["mcp_servers"])
    return fields


def _updated(discipline: Discipline | None) -> Discipline:
    assert discipline is not None  # the caller found it in the same unit
    return discipline


class DisciplineService:
    """Create, read, update and delete disciplines, and edit the tools each one takes away."""

    def __init__(self, db: Database, root: Path | None = None) -> None:
        self.db = db
        self.root = root  # the project whose trust a server added here is recorded for (None: not recorded)

    def _written(self, unit: UnitOfWork, write: Callable[[], Discipline]) -> Discipline:
        """`write` done in `unit`; a stdio server it added is the person's choice, so trusted from now on.

        Only when the servers before it were trusted: an edit never allows a program a clone brought."""
        before = trust.servers_fingerprint(store.list_all(unit)) if self.root else None
        written = write()
        if self.root is None:
            return written
        after = trust.servers_fingerprint(store.list_all(unit))
        allowed_before = before is None or trust.is_trusted(self.root, before, trust.SERVERS)
        if after is not None and after != before and allowed_before:
            trust.record(self.root, after, trust.SERVERS)  # raising here rolls the write back
        return written

    def list(self) -> Listing[Discipline]:
        """Every discipline, by name."""
        with self.db.read() as unit:
            return store.list_all(unit)

    def get(self, name: str) -> Discipline:
        """One discipline."""
        with self.db.read() as unit:
            return self._require(unit, name)

    def create(
        self,
        name: str,
        display_name: str,
        icon: str,
        color: str,
        acronym: str | None = None,
        system_prompt: str | None = None,
        skills: Sequence[str] | None = None,
        conventions: str | None = None,
        disabled_tools: Sequence[str] | None = None,
        mcp_servers: Mapping[str, Any] | Sequence[McpServerSpec] | None = None,
    ) -> Discipline:
        """Add a discipline from plain values (the window, the demo), checked as create_discipline's."""
        given = {
            "name": name,
            "display_name": display_name,
            "icon": icon,
            "color": color,
            "acronym": acronym,
            "system_prompt": system_prompt,
            "skills": skills,
            "conventions": conventions,
        }
        optional = ("acronym", "system_prompt", "conventions")
        values = {
            key: check.blank_is_none(value) if key in optional else value for key, value in given.items()
        }
        arguments = {key: value for key, value in values.items() if value is not None}
        args = check.arguments(CreateDisciplineInput, arguments, "create_discipline")
        return self.create_input(args, disabled_tools=disabled_tools, mcp_servers=mcp_servers)

    def create_input(
        self,
        args: CreateDisciplineInput,
        disabled_tools: Sequence[str] | None = None,
        mcp_servers: Mapping[str, Any] | Sequence[McpServerSpec] | None = None,
    ) -> Discipline:
        """Add a discipline, with the tools it takes away and its extra MCP servers; the name must be new."""
        fields = _columns(args, type(args).model_fields)
        fields["name"] = args.name
        fields["acronym"] = args.acronym
        fields = _extras(fields, {"disabled_tools": disabled_tools, "mcp_servers": mcp_servers})
        with self.db.write() as unit:
            if store.id_of(unit, args.name) is not None:
                raise ConflictError(f"a discipline named {args.name!r} already exists; choose another name")
            return self._written(unit, lambda: store.create(unit, fields))

    def update(self, name: str, **changes: Any) -> Discipline:
        """Change the given fields from plain values (None clears an optional text; lists and servers are
        replaced whole), checked as update_discipline's arguments and the window's own fields."""
        unknown = sorted(set(changes) - set(UPDATABLE_FIELDS))
        if unknown:
            raise InvalidValueError("field", unknown[0], "one of " + ", ".join(UPDATABLE_FIELDS))
        for key in ("display_name", "icon", "color"):
            if key in changes and changes[key] is None:
                raise InvalidValueError(key, None, f"a value ({key} cannot be cleared)")
        given = {key: value for key, value in changes.items() if key not in EXTRAS}
        values = {key: CLEARED.get(key) if value is None else value for key, value in given.items()}
        args = check.arguments(UpdateDisciplineInput, {"name": name, **values}, "update_discipline")
        extras = {key: value for key, value in changes.items() if key in EXTRAS}
        return self.update_input(args, set(given), **extras)

    def update_input(
        self, args: UpdateDisciplineInput, names: Collection[str] | None = None, **extras: Any
    ) -> Discipline:
        """Change the discipline's fields `names` (by default those the arguments set to a value) and the
        window's own `extras` (acronym, disabled_tools, mcp_servers)."""
        if names is None:
            names = {key for key in args.model_fields_set if getattr(args, key) is not None}
        fields = _extras(_columns(args, names), extras)
        with self.db.write() as unit:
            discipline = self._require(unit, args.name)
            if not fields:
                return discipline
            return self._written(unit, lambda: _updated(store.update(unit, args.name, fields)))

    def set_disabled_tools(self, name: str, tools: Sequence[str]) -> Discipline:
        """Replace the tools this discipline takes away from every recipe."""
        return self.update(name, disabled_tools=tools)

    def disable_tools(self, name: str, tools: Sequence[str]) -> Discipline:
        """Take `tools` away from this discipline's sessions too (the ones it took away stay away)."""
        taken = _disabled_tools(tools)
        return self.set_disabled_tools(name, [*self.get(name).disabled_tools, *taken])

    def enable_tools(self, name: str, tools: Sequence[str]) -> Discipline:
        """Give `tools` back (a tool its recipe never offers stays unoffered: disciplines only take away)."""
        given = set(_disabled_tools(tools))
        kept = [tool for tool in self.get(name).disabled_tools if tool not in given]
        return self.set_disabled_tools(name, kept)

    def delete(self, name: str) -> None:
        """Remove a discipline no task uses."""
        with self.db.write() as unit:
            self._require(unit, name)
            using = store.tasks_using(unit, name, limit=SHOWN_TASKS + 1)
            if using:
                shown = ", ".join(f"#{task_id}" for task_id in using[:SHOWN_TASKS])
                more = " and more" if len(using) > SHOWN_TASKS else ""
                raise ConflictError(
                    f"discipline {name!r} is used by tasks {shown}{more}; "
                    "move those tasks to another discipline or delete them first"
                )
            store.delete(unit, name)

    def _require(self, unit: UnitOfWork, name: str) -> Discipline:
        discipline = store.get(unit, name)
        if discipline is None:
            raise NotFoundError("discipline", name, store.names(unit))
        return discipline
