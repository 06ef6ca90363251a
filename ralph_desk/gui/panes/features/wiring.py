"""The Features pane's wiring: reads features and learnings, saves edits, merges and deletes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import QObject

from ralph_desk.domain.records import Change, Feature
from ralph_desk.gui.actions import ActionRunner
from ralph_desk.gui.panes.features.pane import FeaturesPane
from ralph_desk.gui.panes.named_wiring import create_named, delete_named
from ralph_desk.services.container import Services

LIST_TOPICS = frozenset({"features"})
DETAIL_TOPICS = frozenset({"features", "learnings"})


class FeaturesWiring(QObject):
    """Connects the Features pane to the features service; re-reads only what a change touched."""

    topics = LIST_TOPICS | DETAIL_TOPICS

    def __init__(
        self, pane: FeaturesPane, services: Services, runner: ActionRunner, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.pane = pane
        self.services = services
        self.runner = runner
        pane.sig_selected.connect(self.show_detail)
        pane.sig_create_requested.connect(self.create)
        pane.sig_delete_requested.connect(self.delete)
        pane.sig_save_requested.connect(self.save)
        pane.sig_update_learning_requested.connect(self.update_learning)
        pane.sig_delete_learning_requested.connect(self.delete_learning)
        pane.sig_merge_learnings_requested.connect(self.merge_learnings)

    # --- reading ------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Read the list of features, then the selected one in full."""
        features: list[Feature] = self.runner.read("read the features", self.services.features.list, [])
        self.pane.show_records(features)
        self.show_detail(self.pane.selected_name() or "")

    def on_changes(self, changes: Iterable[Change]) -> None:
        """Re-read the list when features changed, the detail when its feature or learnings did."""
        topics = {change.topic for change in changes}
        if topics & LIST_TOPICS:
            self.refresh()
        elif topics & DETAIL_TOPICS:
            self.show_detail(self.pane.selected_name() or "")

    def show_detail(self, name: str) -> None:
        """Show the feature with this name (empty: none) with its learnings."""
        if not name:
            self.pane.detail.show_feature(None, [])
            return
        feature = self.runner.read(f"read feature {name}", lambda: self.services.features.get(name), None)
        self.pane.detail.show_feature(feature, self.pane.names())

    # --- acting -------------------------------------------------------------------------------

    def create(self, values: dict[str, Any]) -> None:
        """Create a feature and select it."""
        create_named(self.runner, self.pane, values, self.services.features.create, self.refresh)

    def delete(self, name: str) -> None:
        """Delete a feature; the service refuses while tasks use it, and the window says why."""
        delete_named(self.runner, "feature", name, self.services.features.delete, self.refresh)

    def save(self, name: str, changes: dict[str, Any]) -> None:
        """Save changed fields of a feature."""
        feature = self.runner.run(
            f"save feature {name}",
            lambda: self.services.features.update(name, **changes),
            done=f"Saved feature {name}.",
        )
        if feature is not None:
            self.pane.detail.fields.load(feature, self.pane.names(), force=True)

    def update_learning(self, learning_id: int, text: str, reason: str | None) -> None:
        """Replace a learning's text and reason."""
        saved = self.runner.run(
            f"edit learning #{learning_id}",
            lambda: self.services.features.update_learning(learning_id, text=text, reason=reason),
            done="Learning saved.",
        )
        if saved is not None:
            self.show_detail(saved.feature_name)

    def delete_learning(self, learning_id: int) -> None:
        """Delete a learning."""

        def delete() -> bool:
            self.services.features.delete_learning(learning_id)
            return True

        deleted = self.runner.run(f"delete learning #{learning_id}", delete, done="Learning deleted.")
        if deleted:
            self.show_detail(self.pane.selected_name() or "")

    def merge_learnings(self, keep_id: int, ids: list[int]) -> None:
        """Fold duplicates into one learning; their hit counts add up."""
        others = [learning_id for learning_id in ids if learning_id != keep_id]
        merged = self.runner.run(
            f"merge {len(ids)} learnings",
            lambda: self.services.features.merge_learnings(keep_id, others),
        )
        if merged is not None:
            self.runner.sig_succeeded.emit(
                f"Merged {len(others) + 1} learnings into one, seen {merged.hit_count} times."
            )
            self.show_detail(merged.feature_name)
            self.pane.detail.learnings.select_ids([merged.id])
