"""The question asked before a plain folder becomes a project: Initialise or Cancel."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QMessageBox, QWidget

TITLE = "Open a project"


def question_text(root: Path) -> str:
    """What the question says about the folder at `root`."""
    state = "is not a ralph-desk project yet" if root.is_dir() else "does not exist yet"
    return f"{root} {state}.\n\nCreate its .ralph/ folder and database now?"


def ask_to_initialise(root: Path, parent: QWidget | None = None) -> bool:
    """Ask whether to make a project of the folder at `root`; True when the person chose Initialise."""
    box = QMessageBox(
        QMessageBox.Icon.Question, TITLE, question_text(root), QMessageBox.StandardButton.NoButton, parent
    )
    initialise = box.addButton("Initialise", QMessageBox.ButtonRole.AcceptRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(initialise)
    box.exec()
    return box.clickedButton() is initialise
