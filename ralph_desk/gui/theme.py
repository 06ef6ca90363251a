"""Colours and palettes in one place: task states, severities, verbs, priorities; light and dark."""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from enum import StrEnum

import shiboken6
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QWidget

from ralph_desk.domain.enums import Priority, SessionOutcome, Severity, TaskOrigin, TaskStatus, Verb


class Scheme(StrEnum):
    """The colour scheme the window is drawn in."""

    LIGHT = "light"
    DARK = "dark"


@dataclass(frozen=True)
class Tones:
    """The neutral colours of one scheme."""

    window: str
    base: str
    alternate: str
    sidebar: str
    card: str
    border: str
    text: str
    muted: str
    highlight: str
    highlighted_text: str
    accent: str
    button: str
    light: str
    dark: str
    shadow: str


TONES: dict[Scheme, Tones] = {
    Scheme.LIGHT: Tones(
        window="#f4f5f7",
        base="#ffffff",
        alternate="#f7f8fa",
        sidebar="#e9ecf1",
        card="#ffffff",
        border="#d5dae1",
        text="#1f2328",
        muted="#5d6672",
        highlight="#2f6fdb",
        highlighted_text="#ffffff",
        accent="#2f6fdb",
        button="#ffffff",
        light="#ffffff",
        dark="#a3aab5",
        shadow="#6b7280",
    ),
    Scheme.DARK: Tones(
        window="#1d2026",
        base="#16181d",
        alternate="#1b1e24",
        sidebar="#17191e",
        card="#23272e",
        border="#363c45",
        text="#e6e8eb",
        muted="#9aa3ae",
        highlight="#3f7fe8",
        highlighted_text="#ffffff",
        accent="#6ea0ff",
        button="#2a2e36",
        light="#3c424c",
        dark="#121418",
        shadow="#000000",
    ),
}

# (light, dark) per value: the dark tones are lighter so they read on a dark background.
STATUS_COLORS: dict[TaskStatus, tuple[str, str]] = {
    TaskStatus.DRAFT: ("#6b7280", "#a3aab5"),
    TaskStatus.PENDING: ("#2563eb", "#6ea8fe"),
    TaskStatus.IN_PROGRESS: ("#7c3aed", "#b197fc"),
    TaskStatus.IN_REVIEW: ("#0e7490", "#22d3ee"),
    TaskStatus.DONE: ("#15803d", "#5ad17f"),
    TaskStatus.BLOCKED: ("#c2410c", "#fb9a5a"),
    TaskStatus.NEEDS_INPUT: ("#be185d", "#f472b6"),
    TaskStatus.SKIPPED: ("#8a919c", "#7d8590"),
    TaskStatus.FAILED: ("#dc2626", "#f87171"),
}
SEVERITY_COLORS: dict[Severity, tuple[str, str]] = {
    Severity.INFO: ("#2563eb", "#6ea8fe"),
    Severity.WARNING: ("#a16207", "#facc15"),
    Severity.BLOCKING: ("#dc2626", "#f87171"),
}
PRIORITY_COLORS: dict[Priority, tuple[str, str]] = {
    Priority.LOW: ("#6b7280", "#a3aab5"),
    Priority.MEDIUM: ("#2563eb", "#6ea8fe"),
    Priority.HIGH: ("#c2410c", "#fb9a5a"),
    Priority.CRITICAL: ("#dc2626", "#f87171"),
}
VERB_COLORS: dict[Verb, tuple[str, str]] = {
    Verb.DONE: STATUS_COLORS[TaskStatus.DONE],
    Verb.PARTIAL: STATUS_COLORS[TaskStatus.PENDING],
    Verb.STUCK: STATUS_COLORS[TaskStatus.BLOCKED],
    Verb.ASK: STATUS_COLORS[TaskStatus.NEEDS_INPUT],
    Verb.FLAG: STATUS_COLORS[TaskStatus.FAILED],
    Verb.LEARNED: ("#0f766e", "#3dd6c3"),
    Verb.SUGGEST: STATUS_COLORS[TaskStatus.IN_PROGRESS],
    Verb.BLOCKED: STATUS_COLORS[TaskStatus.BLOCKED],
}
OUTCOME_STATUS: dict[SessionOutcome, TaskStatus] = {
    SessionOutcome.DONE: TaskStatus.DONE,
    SessionOutcome.REQUEUED: TaskStatus.PENDING,
    SessionOutcome.STUCK: TaskStatus.BLOCKED,
    SessionOutcome.FAILED: TaskStatus.FAILED,
    SessionOutcome.NEEDS_INPUT: TaskStatus.NEEDS_INPUT,
    SessionOutcome.BLOCKED: TaskStatus.BLOCKED,
    SessionOutcome.STOPPED: TaskStatus.SKIPPED,
    SessionOutcome.RATE_LIMITED: TaskStatus.NEEDS_INPUT,
    SessionOutcome.REJECTED: TaskStatus.FAILED,
    SessionOutcome.CHECKS_FAILED: TaskStatus.BLOCKED,  # back to pending, counted stuck: coloured as stuck
    SessionOutcome.RUNNING: TaskStatus.IN_PROGRESS,
}
AGENT_COLOR = STATUS_COLORS[TaskStatus.IN_PROGRESS]
LEVEL_COLORS: dict[str, tuple[str, str]] = {
    "info": SEVERITY_COLORS[Severity.INFO],
    "success": STATUS_COLORS[TaskStatus.DONE],
    "warning": SEVERITY_COLORS[Severity.WARNING],
    "error": SEVERITY_COLORS[Severity.BLOCKING],
}
# The lifecycle order, used to sort by status.
STATUS_ORDER: dict[TaskStatus, int] = {status: index for index, status in enumerate(TaskStatus)}

_forced: Scheme | None = None


def force_scheme(scheme: Scheme | None) -> None:
    """Draw in `scheme` regardless of the system (None: follow the system again)."""
    global _forced
    _forced = scheme


def current_scheme() -> Scheme:
    """The scheme in use: forced, else the system's (light when the system does not say)."""
    if _forced is not None:
        return _forced
    app = QGuiApplication.instance()
    if app is None:
        return Scheme.LIGHT
    hint = QGuiApplication.styleHints().colorScheme()
    return Scheme.DARK if hint == Qt.ColorScheme.Dark else Scheme.LIGHT


def tones(scheme: Scheme | None = None) -> Tones:
    """The neutral colours of `scheme` (default: the current one)."""
    return TONES[scheme or current_scheme()]


def _pick(pair: tuple[str, str], scheme: Scheme | None) -> QColor:
    return QColor(pair[1] if (scheme or current_scheme()) is Scheme.DARK else pair[0])


def status_color(status: TaskStatus, scheme: Scheme | None = None) -> QColor:
    """The colour of a task status."""
    return _pick(STATUS_COLORS[status], scheme)


def severity_color(severity: str | None, scheme: Scheme | None = None) -> QColor:
    """The colour of a flag severity (muted when unknown)."""
    try:
        return _pick(SEVERITY_COLORS[Severity(severity or "")], scheme)
    except ValueError:
        return muted(scheme)


def priority_color(priority: Priority, scheme: Scheme | None = None) -> QColor:
    """The colour of a priority."""
    return _pick(PRIORITY_COLORS[priority], scheme)


def verb_color(verb: Verb, scheme: Scheme | None = None) -> QColor:
    """The colour of a signal verb."""
    return _pick(VERB_COLORS[verb], scheme)


def outcome_color(outcome: str | None, scheme: Scheme | None = None) -> QColor:
    """The colour of a session outcome (the colour of the task state it leads to)."""
    try:
        return status_color(OUTCOME_STATUS[SessionOutcome(outcome or "")], scheme)
    except ValueError:
        return muted(scheme)


def origin_color(origin: TaskOrigin, scheme: Scheme | None = None) -> QColor:
    """The colour of a task origin: the agent colour for agent tasks, muted otherwise."""
    return _pick(AGENT_COLOR, scheme) if origin is TaskOrigin.AGENT else muted(scheme)


def level_color(level: str, scheme: Scheme | None = None) -> QColor:
    """The colour of a message level: info, success, warning or error."""
    return _pick(LEVEL_COLORS.get(level, LEVEL_COLORS["info"]), scheme)


def muted(scheme: Scheme | None = None) -> QColor:
    """The colour of secondary text."""
    return QColor(tones(scheme).muted)


def accent(scheme: Scheme | None = None) -> QColor:
    """The accent colour (links, primary buttons)."""
    return QColor(tones(scheme).accent)


def tint(color: QColor, alpha: float) -> QColor:
    """`color` with an opacity from 0 to 1."""
    tinted = QColor(color)
    tinted.setAlphaF(alpha)
    return tinted


def pill_background(color: QColor, scheme: Scheme | None = None) -> QColor:
    """The soft background behind a coloured label."""
    return tint(color, 0.24 if (scheme or current_scheme()) is Scheme.DARK else 0.13)


def solid_background(color: QColor, scheme: Scheme | None = None) -> QColor:
    """The soft background of `pill_background` made opaque over the window, for what floats over a page."""
    soft, under = pill_background(color, scheme), QColor(tones(scheme).window)
    a = soft.alphaF()

    def mix(top: int, bottom: int) -> int:
        return round(top * a + bottom * (1 - a))

    return QColor(
        mix(soft.red(), under.red()), mix(soft.green(), under.green()), mix(soft.blue(), under.blue())
    )


def status_label(status: TaskStatus) -> str:
    """A status as people read it ("needs input")."""
    return status.value.replace("_", " ")


def palette(scheme: Scheme) -> QPalette:
    """The application palette of a scheme."""
    t = TONES[scheme]
    pal = QPalette()
    role = QPalette.ColorRole
    for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive):
        pal.setColor(group, role.Window, QColor(t.window))
        pal.setColor(group, role.WindowText, QColor(t.text))
        pal.setColor(group, role.Base, QColor(t.base))
        pal.setColor(group, role.AlternateBase, QColor(t.alternate))
        pal.setColor(group, role.Text, QColor(t.text))
        pal.setColor(group, role.Button, QColor(t.button))
        pal.setColor(group, role.ButtonText, QColor(t.text))
        pal.setColor(group, role.Highlight, QColor(t.highlight))
        pal.setColor(group, role.HighlightedText, QColor(t.highlighted_text))
        pal.setColor(group, role.ToolTipBase, QColor(t.card))
        pal.setColor(group, role.ToolTipText, QColor(t.text))
        pal.setColor(group, role.PlaceholderText, QColor(t.muted))
        pal.setColor(group, role.Link, QColor(t.accent))
        pal.setColor(group, role.Mid, QColor(t.border))
        pal.setColor(group, role.Midlight, QColor(t.border))
        pal.setColor(group, role.Light, QColor(t.light))
        pal.setColor(group, role.Dark, QColor(t.dark))
        pal.setColor(group, role.Shadow, QColor(t.shadow))
    disabled = QPalette.ColorGroup.Disabled
    for item in (role.WindowText, role.Text, role.ButtonText):
        pal.setColor(disabled, item, QColor(t.muted))
    pal.setColor(disabled, role.Base, QColor(t.window))
    pal.setColor(disabled, role.Button, QColor(t.window))
    pal.setColor(disabled, role.Window, QColor(t.window))
    return pal


# Per-widget styles that read well on both schemes (an application-wide style sheet would slow
# down building every widget by about a millisecond).
PRIMARY_STYLE = """
QPushButton {
    background: #2f6fdb; color: #ffffff; border: 1px solid #2a62c4; border-radius: 5px;
    padding: 5px 14px; font-weight: 600;
}
QPushButton:hover { background: #3a7bea; }
QPushButton:pressed { background: #285fbe; }
QPushButton:focus { border: 2px solid #ffffff; padding: 4px 13px; }
QPushButton:disabled {
    background: rgba(128, 128, 128, 0.22); color: rgba(128, 128, 128, 0.95);
    border: 1px solid rgba(128, 128, 128, 0.25);
}
"""
OPTION_STYLE = """
QPushButton {
    border: 1px solid rgba(128, 128, 128, 0.55); border-radius: 11px; padding: 4px 12px;
    background: transparent;
}
QPushButton:hover { border-color: #2f6fdb; background: rgba(47, 111, 219, 0.10); }
QPushButton[preferred="true"] { border: 1px solid #2f6fdb; font-weight: 600; }
QPushButton:focus { border: 2px solid #4d8dff; padding: 3px 11px; background: rgba(77, 141, 255, 0.22); }
"""


_styled: weakref.WeakSet[QWidget] = weakref.WeakSet()


def style(widget: QWidget, sheet: str) -> None:
    """Give `widget` its own style sheet, re-applied whenever the scheme changes."""
    widget.setStyleSheet(sheet)
    _styled.add(widget)


def restyle_all() -> None:
    """Polish again every widget with its own style sheet (they keep the old palette otherwise)."""
    for widget in list(_styled):
        if not shiboken6.isValid(widget):  # Qt deleted it while Python still held the wrapper
            _styled.discard(widget)
            continue
        sheet = widget.styleSheet()
        widget.setStyleSheet("")
        widget.setStyleSheet(sheet)


def choose(scheme: Scheme | None) -> None:
    """Draw in `scheme` from now on (None: follow the system); the app's watcher redraws its windows."""
    app = QApplication.instance()
    watcher = app.findChild(ThemeWatcher) if app is not None else None
    if watcher is not None:
        watcher.choose(scheme)
        return
    force_scheme(scheme)
    if isinstance(app, QApplication):
        app.setPalette(palette(current_scheme()))
        restyle_all()


class ThemeWatcher(QObject):
    """Applies the palette of the system's scheme, and again whenever the system switches."""

    sig_changed = Signal()
    """The scheme changed: redraw what holds colours or tinted icons."""

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self._app = app
        self.apply()
        QGuiApplication.styleHints().colorSchemeChanged.connect(self._on_scheme_changed)

    def apply(self) -> None:
        """Set the palette of the current scheme."""
        self._app.setPalette(palette(current_scheme()))

    def choose(self, scheme: Scheme | None) -> None:
        """Draw in `scheme` from now on (None: follow the system), and redraw everything."""
        force_scheme(scheme)
        self._on_scheme_changed(QGuiApplication.styleHints().colorScheme())

    def _on_scheme_changed(self, _scheme: Qt.ColorScheme) -> None:
        self.apply()
        restyle_all()
        self.sig_changed.emit()
