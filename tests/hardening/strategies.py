"""Hostile tool calls generated from the registry's own input models (their JSON schemas).

Each case starts from arguments the model accepts and breaks exactly one thing: a wrong type, a
missing or extra field, an unknown enum value, an id out of range, a 100 kB string, a value that
breaks a field's pattern (NUL bytes, odd unicode, SQL fragments, paths), a path leading out of the
project, a tool the session may not use, or a tool that does not exist. The model itself is the
oracle: `expected_fields` are the fields its validation names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from hypothesis import strategies as st
from pydantic import ValidationError

from ralph_desk.domain.tools import ALL_TOOLS, REGISTRY
from tests.hardening.support import Seeded

NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"
COLOR_PATTERN = r"^#[0-9a-fA-F]{6}$"
ICON_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
ACRONYM_PATTERN = r"^[A-Za-z0-9]{1,10}$"
FILE_PATH_PATTERN = "^[^\\x00\\r\\n]+$"
LINE_PATTERN = r"^[^\r\n]*\S[^\r\n]*$"
TEXT_PATTERN = r"\S"

SQL = ("'; DROP TABLE tasks; --", "%", "_", "core%", "x' OR '1'='1", "1; DELETE FROM tasks")
ODD_UNICODE = (
    "c\u00f4re",  # accented
    "core\u202e",  # right-to-left override
    "\u05e2\u05d1\u05e8\u05d9\u05ea",  # Hebrew (RTL script)
    "\U0001f600",  # emoji
    "e\u0301\u0301\u0301",  # stacked combining marks
    "\u200bcore",  # zero-width space
    "\uff43\uff4f\uff52\uff45",  # fullwidth letters
    "core\ud800",  # an unpaired surrogate (escaped on the wire)
)
NUL = ("core\x00", "\x00", "a\x00b")
PATHS = ("../core", "/etc/passwd", "..\\..\\win.ini")
BLANK = ("", " ", "\t\n", "core core", "core\nx")
HUGE = ("x" * 100_000, "\U0001f600" * 25_000, "e\u0301" * 50_000)
BAD_INTS = (0, -1, 2**31, 2**63, -(2**63), 2**64, 10**30)
ESCAPING_PATHS = ("../secrets.txt", "/etc/passwd", "src/../../outside.py", "..\\..\\windows.ini", "./../x")
WRONG_TYPES: Mapping[str, tuple[Any, ...]] = {
    "integer": ("abc", "1; DROP TABLE tasks; --", "", "%", [], [1], {}, {"id": 1}, 1.5, -0.5, "1.5"),
    "string": (0, 7, -1, 2**63, 1.5, True, False, [], ["core"], {}, {"a": "b"}),
    "enum": (0, 1, True, [], ["pending"], {}, 2.5),
    "boolean": ("perhaps", "maybe", 2, -1, 0.5, [], [True], {}),
    "array": ("core", 5, True, {"0": "x"}, 1.5),
}
UNKNOWN_ENUM = ("DONE", "Pending", "unknown", "", "'; DROP TABLE tasks; --", "%", "needs_input", "failed")
UNKNOWN_ENUM += ("in progress", "\U0001f600", "pending\x00", "high\u202e")
EXTRA_KEYS = ("verbose", "ID", "Id", "__proto__", "constructor", "id ", "task-id", "../etc", "\U0001f600")
EXTRA_KEYS += ("'; DROP TABLE tasks; --", "k" * 200, "")
UNKNOWN_TOOLS = ("get_tasks", "drop_table", "DROP TABLE tasks", "../../etc/passwd", "", "GET_TASK")
UNKNOWN_TOOLS += ("get_task\x00", "\U0001f600", "tools/call", "t" * 300)

KINDS = (
    "wrong_type",
    "missing",
    "null",
    "extra",
    "unknown_enum",
    "bad_id",
    "huge_string",
    "bad_pattern",
    "too_many_items",
    "bad_item",
    "escaping_path",
    "disabled_tool",
    "unknown_tool",
)


@dataclass(frozen=True)
class Shape:
    """One argument of a tool, read from its input model's JSON schema."""

    name: str
    kind: str  # integer, string, enum, boolean or array
    required: bool
    nullable: bool
    minimum: int | None = None
    maximum: int | None = None
    pattern: str | None = None
    max_length: int | None = None
    values: tuple[Any, ...] = ()
    max_items: int | None = None
    item: Shape | None = None

    @property
    def is_path(self) -> bool:
        target = self.item if self.kind == "array" else self
        return target is not None and target.pattern == FILE_PATH_PATTERN


def _shape(name: str, schema: Mapping[str, Any], defs: Mapping[str, Any], required: bool) -> Shape:
    nullable = False
    if "anyOf" in schema:
        members = [member for member in schema["anyOf"] if member.get("type") != "null"]
        nullable = len(members) < len(schema["anyOf"])
        schema = {**members[0], **{k: v for k, v in schema.items() if k != "anyOf"}}
    if "$ref" in schema:
        schema = {**defs[schema["$ref"].rsplit("/", 1)[-1]], **schema}
    if "enum" in schema:
        return Shape(name, "enum", required, nullable, values=tuple(schema["enum"]))
    kind = schema["type"]
    if kind == "array":
        item = _shape(f"{name}[]", schema["items"], defs, True)
        return Shape(name, "array", required, nullable, max_items=schema.get("maxItems"), item=item)
    return Shape(
        name,
        kind,
        required,
        nullable,
        minimum=schema.get("minimum"),
        maximum=schema.get("maximum"),
        pattern=schema.get("pattern"),
        max_length=schema.get("maxLength"),
    )


@cache
def shapes(tool: str) -> tuple[Shape, ...]:
    """The arguments of a registry tool, in declaration order."""
    schema = REGISTRY[tool].input_model.model_json_schema()
    required = set(schema.get("required", []))
    defs = schema.get("$defs", {})
    return tuple(
        _shape(name, prop, defs, name in required) for name, prop in schema.get("properties", {}).items()
    )


def model_errors(tool: str, arguments: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What the tool's input model says is wrong with `arguments` (empty when it accepts them)."""
    try:
        REGISTRY[tool].input_model.model_validate(dict(arguments))
    except ValidationError as error:
        return list(error.errors(include_url=False))
    return []


# --- arguments the model accepts ---------------------------------------------------------------------


def _name_for(tool: str, shape_name: str) -> str:
    if tool == "create_feature" and shape_name == "name":
        return "fresh-feature"
    if tool == "create_discipline" and shape_name == "name":
        return "fresh-discipline"
    if "discipline" in shape_name or (shape_name == "name" and "discipline" in tool):
        return "backend"
    return "core"


def valid_value(tool: str, shape: Shape, seeded: Seeded) -> Any:
    """A value of one argument that the model accepts (and, for ids and names, that exists)."""
    if shape.kind == "integer":
        by_name = {
            "id": seeded.draft if tool == "enrich_task" else seeded.parser,
            "task_id": seeded.parser,
            "comment_id": seeded.comment,
            "limit": 5,
            "offset": 0,
        }
        if shape.name in by_name:
            return by_name[shape.name]
        return max(shape.minimum or 1, 1)
    if shape.kind == "enum":
        return shape.values[0]
    if shape.kind == "boolean":
        return False
    if shape.kind == "array":
        return []
    samples = {
        NAME_PATTERN: _name_for(tool, shape.name.removesuffix("[]")),
        COLOR_PATTERN: "#336699",
        ICON_PATTERN: "server",
        ACRONYM_PATTERN: "AB",
        FILE_PATH_PATTERN: "src/main.py",
        LINE_PATTERN: "one line",
        TEXT_PATTERN: "some text",
    }
    return samples.get(shape.pattern or "", "plain text")


@st.composite
def valid_arguments(
    draw: st.DrawFn, tool: str, seeded: Seeded, only_required: bool = False
) -> dict[str, Any]:
    """Every required argument and a drawn subset of the optional ones, each with an accepted value."""
    arguments = {}
    for shape in shapes(tool):
        if shape.required or (not only_required and draw(st.booleans())):
            arguments[shape.name] = valid_value(tool, shape, seeded)
    return arguments


# --- the breakages -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One hostile call and what its refusal must name."""

    session: str
    tool: str
    arguments: dict[str, Any]
    kind: str
    expected_fields: frozenset[str] = field(default_factory=frozenset)

    @property
    def wire_safe(self) -> bool:
        """Whether a client can encode the call as UTF-8 JSON (no unpaired surrogates)."""
        try:
            json.dumps([self.tool, self.arguments], ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True

    def __repr__(self) -> str:  # keep hypothesis's report readable with 100 kB values
        shown = {
            k: (v if len(repr(v)) < 120 else f"<{type(v).__name__} of {len(v)}>")
            for k, v in self.arguments.items()
        }
        fields = sorted(self.expected_fields)
        return f"Case({self.kind}: {self.session} → {self.tool}({shown!r}), fields={fields})"


def _invalid_candidates(
    tool: str, base: Mapping[str, Any], shape: Shape, candidates: Sequence[Any]
) -> list[Any]:
    """The candidates the model refuses for this argument (others would make no hostile case)."""
    return [value for value in candidates if model_errors(tool, {**base, shape.name: value})]


def _pattern_breakers(shape: Shape) -> tuple[Any, ...]:
    target = shape.item if shape.kind == "array" else shape
    if target is None or target.kind != "string":
        return ()
    values = (*SQL, *ODD_UNICODE, *NUL, *PATHS, *BLANK)
    return tuple([value] for value in values) if shape.kind == "array" else values


def _breakages(tool: str, base: Mapping[str, Any], shape: Shape) -> dict[str, list[Any]]:
    """For one argument: each breakage kind that applies, with the values the model refuses."""
    found: dict[str, list[Any]] = {
        "wrong_type": _invalid_candidates(tool, base, shape, WRONG_TYPES[shape.kind]),
        "null": _invalid_candidates(tool, base, shape, [None]),
        "bad_pattern": _invalid_candidates(tool, base, shape, _pattern_breakers(shape)),
    }
    if shape.kind == "enum":
        found["unknown_enum"] = _invalid_candidates(tool, base, shape, UNKNOWN_ENUM)
    if shape.kind == "integer":
        found["bad_id"] = _invalid_candidates(tool, base, shape, BAD_INTS)
    if shape.kind == "string":
        found["huge_string"] = _invalid_candidates(tool, base, shape, HUGE)
    if shape.kind == "array" and shape.item is not None:
        item_base = "x" if shape.item.kind == "string" else 1
        found["huge_string"] = _invalid_candidates(tool, base, shape, [[value] for value in HUGE])
        if shape.max_items is not None:
            found["too_many_items"] = _invalid_candidates(
                tool, base, shape, [[item_base] * (shape.max_items + 1)]
            )
        wrong_items = [[value] for value in WRONG_TYPES[shape.item.kind]] + [[None], ["ok", None]]
        found["bad_item"] = _invalid_candidates(tool, base, shape, wrong_items)
    return {kind: values for kind, values in found.items() if values}


@cache
def _breakage_table(tool: str, seeded: Seeded) -> dict[str, list[tuple[str, list[Any]]]]:
    """kind → [(argument, refused values)], computed once per tool over its full valid arguments."""
    base = {shape.name: valid_value(tool, shape, seeded) for shape in shapes(tool)}
    table: dict[str, list[tuple[str, list[Any]]]] = {}
    for shape in shapes(tool):
        for kind, values in _breakages(tool, base, shape).items():
            table.setdefault(kind, []).append((shape.name, values))
    return table


def _fields_named(tool: str, arguments: Mapping[str, Any]) -> frozenset[str]:
    return frozenset(str(error["loc"][0]) for error in model_errors(tool, arguments) if error["loc"])


def kinds_of(tool: str, seeded: Seeded) -> list[str]:
    """The breakages that apply to a tool's arguments."""
    kinds = sorted(_breakage_table(tool, seeded))
    if any(shape.required for shape in shapes(tool)):
        kinds.append("missing")
    if any(shape.is_path for shape in shapes(tool)):
        kinds.append("escaping_path")
    return [*kinds, "extra"]


@st.composite
def argument_case(draw: st.DrawFn, session: str, tool: str, seeded: Seeded, kind: str) -> Case:
    """A call of an enabled tool with one argument broken the `kind` way."""
    if kind == "escaping_path":
        arguments = draw(valid_arguments(tool, seeded, only_required=True))
        shape = draw(st.sampled_from([shape for shape in shapes(tool) if shape.is_path]))
        escaping = draw(st.sampled_from(ESCAPING_PATHS))
        arguments[shape.name] = ["docs/ok.md", escaping] if shape.kind == "array" else escaping
        return Case(session, tool, arguments, kind, frozenset({shape.name}))
    arguments = draw(valid_arguments(tool, seeded))
    if kind == "missing":
        del arguments[draw(st.sampled_from([shape.name for shape in shapes(tool) if shape.required]))]
    elif kind == "extra":
        declared = {shape.name for shape in shapes(tool)}
        names = [key for key in EXTRA_KEYS if key not in declared]
        arguments[draw(st.sampled_from(names))] = draw(st.sampled_from((1, "x", None, True, [], {})))
    else:
        name, values = draw(st.sampled_from(_breakage_table(tool, seeded)[kind]))
        arguments[name] = draw(st.sampled_from(values))
    expected = _fields_named(tool, arguments)
    assert expected, f"generator bug: the model accepts {kind} arguments {arguments!r} for {tool}"
    return Case(session, tool, arguments, kind, expected)


def applicable(enabled: Mapping[str, frozenset[str]], seeded: Seeded, kind: str) -> list[tuple[str, str]]:
    """The (session, tool) pairs a kind of breakage applies to (tool: None for the tool-level kinds)."""
    if kind == "unknown_tool":
        return [(session, "") for session in sorted(enabled)]
    if kind == "disabled_tool":
        return [
            (session, tool) for session in sorted(enabled) for tool in sorted(ALL_TOOLS - enabled[session])
        ]
    return [
        (session, tool)
        for session in sorted(enabled)
        for tool in sorted(enabled[session])
        if kind in kinds_of(tool, seeded)
    ]


@st.composite
def hostile_case(draw: st.DrawFn, enabled: Mapping[str, frozenset[str]], seeded: Seeded, kind: str) -> Case:
    """A hostile call of one kind for one of the sessions (session key → its enabled tools)."""
    session, tool = draw(st.sampled_from(applicable(enabled, seeded, kind)))
    if kind == "disabled_tool":
        return Case(session, tool, draw(valid_arguments(tool, seeded)), kind)
    if kind == "unknown_tool":
        name = draw(st.sampled_from(UNKNOWN_TOOLS) | st.from_regex(r"[a-z][a-z_]{0,24}", fullmatch=True))
        if name in ALL_TOOLS:
            name += "_x"
        return Case(session, name, draw(st.sampled_from(({}, {"id": 1}, {"query": "%"}))), kind)
    return draw(argument_case(session, tool, seeded, kind))


def field_is_named(message: str, name: str) -> bool:
    """Whether a refusal names an argument as a word of its own (`name:`, `name[3]`, `set name through`)."""
    if name == "":
        return "unexpected argument" in message
    escaped = re.escape(name)
    return re.search(rf"(?<![A-Za-z0-9_]){escaped}(?![A-Za-z0-9_])", message) is not None
