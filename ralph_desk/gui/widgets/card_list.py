"""A scrolling column of cards kept in step with a list of records, without rebuilding live cards."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Generic, TypeVar

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication, QStackedWidget, QVBoxLayout, QWidget

from ralph_desk.gui.widgets.card import CardFrame
from ralph_desk.gui.widgets.empty_state import EmptyState
from ralph_desk.gui.widgets.layout import scroller

R = TypeVar("R")
CARD_SPACING = 10


class Card(CardFrame):
    """A framed box showing one record; subclasses say which input `focus_input` focuses."""

    def focus_input(self) -> None:
        """Give the keyboard to the card's main input."""
        self.setFocus(Qt.FocusReason.OtherFocusReason)


C = TypeVar("C", bound=Card)


class CardList(QStackedWidget, Generic[R, C]):
    """Cards for records, in order; a card whose record is still there is updated, not replaced."""

    def __init__(
        self,
        key: Callable[[R], Hashable],
        create: Callable[[R], C],
        update: Callable[[C, R], None],
        empty: EmptyState,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._key = key
        self._create = create
        self._update = update
        self.cards: dict[Hashable, C] = {}
        self.order: list[Hashable] = []
        self.marked: Hashable | None = None
        """The card F8 moved to, outlined."""
        body = QWidget()
        self._layout = QVBoxLayout(body)
        self._layout.setContentsMargins(2, 2, 10, 2)
        self._layout.setSpacing(CARD_SPACING)
        self._layout.addStretch(1)
        self.scroller = scroller(body)
        self.scroller.viewport().setBackgroundRole(QPalette.ColorRole.Window)
        self.empty = empty
        self.addWidget(self.scroller)
        self.addWidget(empty)
        self.setCurrentWidget(empty)

    def sync(self, records: Sequence[R]) -> None:
        """Show exactly `records`: update kept cards, add new ones, drop gone ones; keep focus and scroll."""
        focused_index = self._focused_index()
        focused_key = self.order[focused_index] if focused_index is not None else None
        scroll_value = self.scroller.verticalScrollBar().value()
        keys = [self._key(record) for record in records]
        for gone in set(self.cards) - set(keys):
            card = self.cards.pop(gone)
            self._layout.removeWidget(card)
            card.hide()
            card.deleteLater()
        for position, (key, record) in enumerate(zip(keys, records, strict=True)):
            existing = self.cards.get(key)
            if existing is None:
                card = self._create(record)
                self.cards[key] = card
            else:
                card = existing
                self._update(card, record)
            if self._layout.indexOf(card) != position:
                self._layout.removeWidget(card)
                self._layout.insertWidget(position, card)
        self.order = keys
        self.setCurrentWidget(self.scroller if keys else self.empty)
        self.scroller.verticalScrollBar().setValue(scroll_value)
        if focused_index is not None and focused_key not in self.cards and keys:
            moved_to = min(focused_index, len(keys) - 1)
            if self.marked is not None:
                self.mark(keys[moved_to])
            self.card_at(moved_to).focus_input()

    def current_card(self) -> C | None:
        """The card with the keyboard, else the first (None when there is none)."""
        if not self.order:
            return None
        index = self._focused_index()
        return self.card_at(index if index is not None else 0)

    def step(self, delta: int) -> None:
        """Give the keyboard to the card `delta` places on (the first when none has it), scrolled to."""
        if not self.order:
            return
        index = self._focused_index()
        target = 0 if index is None else max(0, min(len(self.order) - 1, index + delta))
        card = self.card_at(target)
        self.mark(self.order[target])
        self.scroller.ensureWidgetVisible(card)
        card.focus_input()

    def mark(self, key: Hashable | None) -> None:
        """Outline the card of `key` in the accent colour (the one F8 moved to), and no other."""
        self.marked = key
        for each, card in self.cards.items():
            card.set_highlighted(each == key)

    def card_at(self, index: int) -> C:
        """The card in position `index`."""
        return self.cards[self.order[index]]

    def card(self, key: Hashable) -> C | None:
        """The card of the record with `key`, if shown."""
        return self.cards.get(key)

    def _focused_index(self) -> int | None:
        focus = QApplication.focusWidget() or self.focusWidget()
        for index, key in enumerate(self.order):
            card = self.cards.get(key)
            if card is not None and focus is not None and (focus is card or card.isAncestorOf(focus)):
                return index
        return None
