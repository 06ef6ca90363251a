"""Unsaved edits are never lost: leaving an editor that holds some asks Save, Discard or Cancel.

One mechanism for every editor (task fields, feature fields, a discipline's tabs, the loop settings):
the selection of a list, the pane shown and the window's close all ask through `ask_to_leave`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Generic, Protocol, TypeVar

from PySide6.QtWidgets import QAbstractButton, QMessageBox, QWidget

K = TypeVar("K")

CHANGED_ELSEWHERE = "Changed elsewhere while you edit: Save overwrites it, Revert shows it."


def changed_elsewhere(shown: object, fresh: object, edited: Iterable[str]) -> bool:
    """Whether a record read again differs from the one an editor loaded in a field it edits (`edited`):
    another writer changed it, not a write that only touched what the editor does not show."""
    return any(getattr(shown, name) != getattr(fresh, name) for name in edited)


class Editor(Protocol):
    """A form that may hold edits not yet saved."""

    @property
    def dirty(self) -> bool:
        """Whether the form differs from what it loaded."""
        ...

    def request_save(self) -> None:
        """Save the edits (on the worker: `dirty` is false once it is done, unless saving failed)."""
        ...

    def revert_edits(self) -> None:
        """Throw the edits away and show what is stored."""
        ...


class UnsavedBox(QMessageBox):
    """Save / Discard / Cancel for the edits of `what`; Save is the default (Enter keeps the work)."""

    def __init__(
        self,
        what: str,
        editor: Editor,
        leave: Callable[[], None],
        stay: Callable[[], None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(
            QMessageBox.Icon.Warning,
            "Unsaved changes",
            f"You changed {what} without saving. Save the changes first?",
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
            parent,
        )
        self.setDefaultButton(QMessageBox.StandardButton.Save)
        self.save_button = self.button(QMessageBox.StandardButton.Save)
        self.discard_button = self.button(QMessageBox.StandardButton.Discard)
        self.cancel_button = self.button(QMessageBox.StandardButton.Cancel)
        self._editor = editor
        self._leave = leave
        self._stay = stay
        self.buttonClicked.connect(self._clicked)

    def _clicked(self, clicked: QAbstractButton) -> None:
        if clicked is self.save_button:
            self._editor.request_save()
            after_work(self.parentWidget(), self._saved)
        elif clicked is self.discard_button:
            self._editor.revert_edits()
            self._leave()
        else:
            self._stay()

    def _saved(self) -> None:
        (self._stay if self._editor.dirty else self._leave)()  # a failed save keeps the edits in view


def after_work(widget: QWidget | None, then: Callable[[], None]) -> None:
    """`then()` once the work the window has handed to its worker is done (at once without a worker)."""
    top = widget.window() if widget is not None else None
    wait: Callable[[Callable[[], None]], None] | None = getattr(top, "after_work", None)
    if wait is None:
        then()
        return
    wait(then)


def ask_to_leave(
    editor: Editor,
    what: str,
    parent: QWidget,
    leave: Callable[[], None],
    stay: Callable[[], None] = lambda: None,
) -> UnsavedBox | None:
    """`leave()` now when nothing is unsaved (None); else open Save/Discard/Cancel and return it."""
    if not editor.dirty:
        leave()
        return None
    box = UnsavedBox(what, editor, leave, stay, parent)
    box.open()
    return box


class SelectionGuard(Generic[K]):
    """Holds a list's selection on the record being edited until its edits are saved or thrown away."""

    def __init__(
        self,
        editor: Editor,
        what: Callable[[K | None], str],
        select: Callable[[K | None], object],
        parent: QWidget,
    ) -> None:
        self.editor = editor
        self.current: K | None = None
        self.box: UnsavedBox | None = None
        self._what = what
        self._select = select
        self._parent = parent
        self._moving = False

    def allow(self, wanted: K | None) -> bool:
        """Whether the selection may move to `wanted`; if not, it is put back and the person is asked."""
        if self._moving or wanted == self.current or not self.editor.dirty:
            self.current = wanted
            return True
        held = self.current
        self._move(held)
        self.box = ask_to_leave(self.editor, self._what(held), self._parent, lambda: self._move(wanted))
        return False

    def _move(self, key: K | None) -> None:
        self._moving = True
        try:
            self._select(key)
        finally:
            self._moving = False
