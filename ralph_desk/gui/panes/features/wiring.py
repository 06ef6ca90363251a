"""The Features pane's wiring: reads features and learnings, saves edits, merges and deletes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import QObject

from ralph_desk.domain.records import Change, Feature, FeatureLearning
from ralph_desk.gui.backend import Services
from ralph_desk.gui.panes.features.pane import FeaturesPane
from ralph_desk.gui.panes.named_wiring import create_named, delete_named
from ralph_desk.gui.worker import Worker

LIST_TOPICS = frozenset({"features"})
DETAIL_TOPICS = frozenset({"features", "learnings"})


class FeaturesWiring(QObject):
    """Connects the Features pane to the features service; re-reads only what a change touched."""

    topics = LIST_TOPICS | DETAIL_TOPICS

    def __init__(
        self, pane: FeaturesPane, services: Services, worker: Worker, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.pane = pane
        self.features = services.features
        self.worker = worker
        pane.sig_selected.connect(self.show_detail)
        pane.sig_create_requested.connect(self.create)
        pane.sig_delete_requested.connect(self.delete)
        pane.sig_save_requested.connect(self.save)
        pane.sig_update_learning_requested.connect(self.update_learning)
        pane.sig_delete_learning_requested.connect(self.delete_learning)
        pane.sig_merge_learnings_requested.connect(self.merge_learnings)

    # --- reading ------------------------------------------------------------------------------

    def refresh(self, select: str = "") -> None:
        """Read the list of features, then the selected one (or the one named `select`) in full."""
        self.worker.submit("read the features", self.features.list, lambda found: self._show(found, select))

    def _show(self, features: list[Feature], select: str) -> None:
        self.pane.show_records(features)
        if select:
            self.pane.select_name(select)
        self.show_detail(self.pane.selected_name() or "")

    def on_changes(self, changes: Iterable[Change]) -> None:
        """Re-read the list when features changed, the detail when its feature or learnings did."""
        topics = {change.topic for change in changes}
        if topics & LIST_TOPICS:
            self.refresh()
        elif topics & DETAIL_TOPICS:
            self.show_detail(self.pane.selected_name() or "")

    def show_detail(self, name: str, select: list[int] | None = None) -> None:
        """Show the feature with this name (empty: none) with its learnings, these learnings selected."""
        if not name:
            self.pane.detail.show_feature(None, [])
            return
        features = self.features
        self.worker.submit(
            f"read feature {name}",
            lambda: features.get(name),
            lambda feature: self._show_feature(feature, select),
            lambda: self.pane.detail.show_feature(None, self.pane.names()),
        )

    def _show_feature(self, feature: Feature, select: list[int] | None) -> None:
        self.pane.detail.show_feature(feature, self.pane.names())
        if select:
            self.pane.detail.learnings.select_ids(select)

    # --- acting -------------------------------------------------------------------------------

    def create(self, values: dict[str, Any]) -> None:
        """Create a feature and select it."""
        create_named(self.worker, self.pane, values, self.features.create, self.refresh)

    def delete(self, name: str) -> None:
        """Delete a feature; the service refuses while tasks use it, and the window says why."""
        delete_named(self.worker, "feature", name, self.features.delete, self.refresh)

    def save(self, name: str, changes: dict[str, Any]) -> None:
        """Save changed fields of a feature."""
        features = self.features
        self.worker.submit(
            f"save feature {name}",
            lambda: features.update(name, **changes),
            lambda feature: self.pane.detail.fields.load(feature, self.pane.names(), force=True),
            done=f"Saved feature {name}.",
            keep=True,
            busy=True,
        )

    def update_learning(self, learning_id: int, text: str, reason: str | None) -> None:
        """Replace a learning's text and reason."""
        features = self.features
        self.worker.submit(
            f"edit learning #{learning_id}",
            lambda: features.update_learning(learning_id, text=text, reason=reason),
            lambda saved: self.show_detail(saved.feature_name),
            done="Learning saved.",
            keep=True,
            busy=True,
        )

    def delete_learning(self, learning_id: int) -> None:
        """Delete a learning."""
        features = self.features
        self.worker.submit(
            f"delete learning #{learning_id}",
            lambda: features.delete_learning(learning_id),
            lambda _deleted: self.show_detail(self.pane.selected_name() or ""),
            done="Learning deleted.",
            keep=True,
            busy=True,
        )

    def merge_learnings(self, keep_id: int, ids: list[int]) -> None:
        """Fold duplicates into one learning; their hit counts add up."""
        others = [learning_id for learning_id in ids if learning_id != keep_id]
        features = self.features
        self.worker.submit(
            f"merge {len(ids)} learnings",
            lambda: features.merge_learnings(keep_id, others),
            lambda merged: self._merged(merged, len(others) + 1),
            keep=True,
            busy=True,
        )

    def _merged(self, merged: FeatureLearning, count: int) -> None:
        self.worker.succeed(f"Merged {count} learnings into one, seen {merged.hit_count} times.")
        self.show_detail(merged.feature_name, select=[merged.id])
