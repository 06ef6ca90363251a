"""Signals as rows: the flags table of the inbox and the signal timeline of a task."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from PySide6.QtCore import QObject

from ralph_desk.domain.enums import FlagResolution, Severity, Verb
from ralph_desk.domain.records import Signal
from ralph_desk.gui import fmt, theme
from ralph_desk.gui.models.base import Column, RecordTableModel


def describe(signal: Signal) -> str:
    """What a signal says, in one line of text."""
    match signal.verb:
        case Verb.DONE:
            return signal.summary or ""
        case Verb.PARTIAL:
            return f"{signal.summary or ''} — remaining: {signal.remaining or ''}"
        case Verb.STUCK:
            return signal.reason or ""
        case Verb.ASK:
            answer = f" — answer: {signal.answer}" if signal.answer else " — unanswered"
            return f"{signal.question or ''}{answer}"
        case Verb.FLAG:
            return f"[{signal.severity}/{signal.category}] {signal.what or ''}"
        case Verb.LEARNED:
            return f"({signal.kind}, {signal.scope}) {signal.text or ''}"
        case Verb.SUGGEST:
            return f"({signal.kind}) {signal.what or ''} — why: {signal.why or ''}"
        case Verb.BLOCKED:
            detail = f" — {signal.detail}" if signal.detail else ""
            kind = (signal.kind or "").replace("_", " ")
            return f"waits on {signal.on or ''} ({kind}){detail}"
    return ""


def describe_long(signal: Signal) -> str:
    """Every field a signal carries, one per line, for a detail view."""
    fields = [
        ("Verb", signal.verb.value),
        ("When", fmt.full(signal.created)),
        ("Session", signal.session_id),
        ("Summary", signal.summary),
        ("Remaining", signal.remaining),
        ("Reason", signal.reason),
        ("Question", signal.question),
        ("Options", ", ".join(signal.options) if signal.options else None),
        ("Preferred", signal.preferred),
        ("Blocking", None if signal.blocking is None else ("yes" if signal.blocking else "no")),
        ("What", signal.what),
        ("Why", signal.why),
        ("Severity", signal.severity),
        ("Category", signal.category),
        ("Text", signal.text),
        ("Kind", signal.kind),
        ("Scope", signal.scope),
        ("Rationale", signal.rationale),
        ("On", signal.on),
        ("Detail", signal.detail),
        ("Answer", signal.answer),
        ("Resolution", signal.resolution.value if signal.resolution else None),
        ("Review", signal.review_decision.value if signal.review_decision else None),
        ("Review reason", signal.review_reason),
        ("Decided by", signal.decided_by),
        ("Created task", f"#{signal.created_task_id}" if signal.created_task_id else None),
    ]
    return "\n".join(f"{name}: {value}" for name, value in fields if value)


def session_numbers(session_ids: Iterable[str | None]) -> dict[str, int]:
    """Number sessions 1, 2, 3… in the order given (the first time each appears)."""
    numbers: dict[str, int] = {}
    for session_id in session_ids:
        if session_id and session_id not in numbers:
            numbers[session_id] = len(numbers) + 1
    return numbers


def timeline_columns(numbers: dict[str, int]) -> list[Column[Signal]]:
    """The timeline's columns; sessions show as their number in `numbers` (a dict kept up to date)."""

    def session(signal: Signal) -> str:
        number = numbers.get(signal.session_id or "")
        return f"#{number}" if number else "—"

    return [
        Column(
            "When",
            lambda s: fmt.when(s.created),
            sort_key=lambda s: (s.created, s.id),
            tooltip=lambda s: fmt.full(s.created),
        ),
        Column(
            "Session",
            session,
            sort_key=lambda s: numbers.get(s.session_id or "", 0),
            tooltip=lambda s: s.session_id,
            header_tip="The session that sent it, numbered as in the sessions table",
        ),
        Column(
            "Verb",
            lambda s: s.verb.value,
            sort_key=lambda s: s.verb.value,
            color=lambda s: theme.verb_color(s.verb),
        ),
        Column("Detail", lambda s: fmt.one_line(describe(s), 200), tooltip=describe_long),
    ]


class SignalTimelineModel(RecordTableModel[Signal]):
    """Every signal of a task, oldest first: when, which session, verb, what it says."""

    def __init__(self, numbers: dict[str, int] | None = None, parent: QObject | None = None) -> None:
        self.numbers: dict[str, int] = numbers if numbers is not None else {}
        super().__init__(timeline_columns(self.numbers), key=lambda signal: signal.id, parent=parent)


@dataclass(frozen=True)
class FlagItem:
    """A flag with the task it was raised on, as the inbox lists it."""

    flag: Signal
    task_title: str
    feature: str


def _severity_rank(item: FlagItem) -> int:
    try:
        return -Severity(item.flag.severity or "").rank
    except ValueError:
        return 0


def flag_order(item: FlagItem) -> tuple[int, float, int]:
    """The inbox's order of flags: blocking, then warning, then info; newest first within."""
    return (_severity_rank(item), -item.flag.created.timestamp(), -item.flag.id)


def _resolution(item: FlagItem) -> str:
    return (item.flag.resolution or FlagResolution.OPEN).value


def _resolved_by(item: FlagItem) -> str | None:
    """Who settled the flag (None while it is open)."""
    if item.flag.resolution in (None, FlagResolution.OPEN):
        return None
    return f"{_resolution(item)} by {fmt.maker(item.flag.decided_by)}"


FLAG_COLUMNS: list[Column[FlagItem]] = [
    Column(
        "Severity",
        lambda i: i.flag.severity or "",
        sort_key=_severity_rank,
        color=lambda i: theme.severity_color(i.flag.severity),
    ),
    Column(
        "Category",
        lambda i: (i.flag.category or "").replace("_", " "),
        sort_key=lambda i: i.flag.category or "",
    ),
    Column(
        "What",
        lambda i: fmt.one_line(i.flag.what, 160),
        sort_key=lambda i: (i.flag.what or "").casefold(),
        tooltip=lambda i: i.flag.what,
    ),
    Column(
        "Task",
        lambda i: f"#{i.flag.task_id} {i.task_title}",
        sort_key=lambda i: i.flag.task_id,
        tooltip=lambda i: f"#{i.flag.task_id} {i.task_title}",
    ),
    Column("Feature", lambda i: i.feature, sort_key=lambda i: i.feature),
    Column(
        "Resolution",
        _resolution,
        sort_key=_resolution,
        tooltip=_resolved_by,
        color=lambda i: theme.accent() if i.flag.resolution in (None, FlagResolution.OPEN) else theme.muted(),
    ),
    Column(
        "Raised",
        lambda i: fmt.when(i.flag.created),
        sort_key=lambda i: (i.flag.created, i.flag.id),
        tooltip=lambda i: fmt.full(i.flag.created),
    ),
]


class FlagTableModel(RecordTableModel[FlagItem]):
    """Flags as rows: severity, category, what, task, feature, resolution, when."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(FLAG_COLUMNS, key=lambda item: item.flag.id, parent=parent)
