"""A task's comments: read, add, edit in place, delete after a confirmation in place."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from ralph_desk.domain.records import Comment
from ralph_desk.gui import fmt
from ralph_desk.gui.widgets.card_list import Card, CardList
from ralph_desk.gui.widgets.common import SendingTextEdit, button, label, tool_button
from ralph_desk.gui.widgets.empty_state import EmptyState


class CommentCard(Card):
    """One comment: who, when, the text; Edit turns it into a text box, Delete asks once more."""

    sig_edit_requested = Signal(int, str)
    """Replace the text of the comment with this id."""
    sig_delete_requested = Signal(int)
    """Delete the comment with this id."""

    def __init__(self, comment: Comment, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.comment = comment
        self.who = label()
        self.when = label(name="muted")
        self.edit_button = tool_button("edit", "Edit this comment")
        self.delete_button = tool_button("trash", "Delete this comment")
        self.edit_button.clicked.connect(self.start_editing)
        self.delete_button.clicked.connect(self._ask_delete)
        top = QHBoxLayout()
        top.addWidget(self.who)
        top.addWidget(self.when, 1)
        top.addWidget(self.edit_button)
        top.addWidget(self.delete_button)
        self.body = label(wrap=True, selectable=True)
        self.editor = SendingTextEdit("Ctrl+Enter saves", lines=4)
        self.editor.sig_send_requested.connect(self._save)
        self.save_button = button("Save", "save", "Save the comment (Ctrl+Enter)", primary=True)
        self.cancel_button = button("Cancel")
        self.save_button.clicked.connect(self._save)
        self.cancel_button.clicked.connect(self.stop_editing)
        self.confirm = label("Delete this comment?", name="muted")
        self.confirm_button = button("Delete", "trash", "Delete it for good")
        self.keep_button = button("Keep")
        self.confirm_button.clicked.connect(lambda: self.sig_delete_requested.emit(self.comment.id))
        self.keep_button.clicked.connect(self._hide_confirm)
        row = QHBoxLayout()
        row.addWidget(self.confirm, 1)
        for widget in (self.confirm_button, self.keep_button, self.cancel_button, self.save_button):
            row.addWidget(widget)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 8, 10)
        layout.setSpacing(6)
        layout.addLayout(top)
        layout.addWidget(self.body)
        layout.addWidget(self.editor)
        layout.addLayout(row)
        self.set_comment(comment)
        self.stop_editing()

    def set_comment(self, comment: Comment) -> None:
        """Show `comment` (an edit in progress is kept)."""
        self.comment = comment
        speaking = f" for {comment.discipline}" if comment.discipline else ""
        self.who.setText(f"<b>{escape(comment.author)}</b>{escape(speaking)}")
        edited = " · edited" if comment.updated_at > comment.created_at else ""
        self.when.setText(f"{fmt.when(comment.created_at)}{edited}")
        self.when.setToolTip(fmt.full(comment.updated_at))
        self.body.setText(comment.body)

    def start_editing(self) -> None:
        """Turn the text into an editable box."""
        self._hide_confirm()
        self.editor.setPlainText(self.comment.body)
        for widget in (self.editor, self.save_button, self.cancel_button):
            widget.show()
        self.body.hide()
        self.editor.setFocus(Qt.FocusReason.OtherFocusReason)

    def stop_editing(self) -> None:
        """Show the text again, without saving."""
        for widget in (self.editor, self.save_button, self.cancel_button):
            widget.hide()
        self.body.show()
        self._hide_confirm()

    def _save(self) -> None:
        text = self.editor.toPlainText().strip()
        if text and text != self.comment.body:
            self.sig_edit_requested.emit(self.comment.id, text)
        self.stop_editing()

    def _ask_delete(self) -> None:
        for widget in (self.confirm, self.confirm_button, self.keep_button):
            widget.show()

    def _hide_confirm(self) -> None:
        for widget in (self.confirm, self.confirm_button, self.keep_button):
            widget.hide()


class CommentsView(QWidget):
    """The comments of one task, oldest first, and a box to add one."""

    sig_add_requested = Signal(str)
    """Add a comment with this text to the task shown."""
    sig_edit_requested = Signal(int, str)
    """Replace the text of the comment with this id."""
    sig_delete_requested = Signal(int)
    """Delete the comment with this id."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        empty = EmptyState(
            "comment", "No comments yet", "Comments travel with the task: notes for people and agents alike."
        )
        self.cards: CardList[Comment, CommentCard] = CardList(
            key=lambda comment: comment.id,
            create=self._create_card,
            update=lambda card, comment: card.set_comment(comment),
            empty=empty,
        )
        self.new = SendingTextEdit("Add a comment — Ctrl+Enter adds it", lines=3)
        self.new.sig_send_requested.connect(self._add)
        self.add_button = button("Add comment", "add", "Add this comment (Ctrl+Enter)")
        self.add_button.clicked.connect(self._add)
        row = QHBoxLayout()
        row.addWidget(self.new, 1)
        row.addWidget(self.add_button, 0, Qt.AlignmentFlag.AlignBottom)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(self.cards, 1)
        layout.addLayout(row)

    def show_comments(self, comments: list[Comment]) -> None:
        """Show these comments."""
        self.cards.sync(comments)

    def clear_input(self) -> None:
        """Empty the new-comment box (after it was added)."""
        self.new.clear()

    def _add(self) -> None:
        text = self.new.toPlainText().strip()
        if text:
            self.sig_add_requested.emit(text)

    def _create_card(self, comment: Comment) -> CommentCard:
        card = CommentCard(comment)
        card.sig_edit_requested.connect(self.sig_edit_requested)
        card.sig_delete_requested.connect(self.sig_delete_requested)
        return card
