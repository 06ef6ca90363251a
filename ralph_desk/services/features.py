"""Features and their learnings."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from ralph_desk.domain.enums import LearningSource
from ralph_desk.domain.learnings import find_duplicate
from ralph_desk.domain.records import Feature, FeatureLearning
from ralph_desk.services import validation as check
from ralph_desk.services.errors import ConflictError, InvalidValueError, NotFoundError
from ralph_desk.store import features as store
from ralph_desk.store.database import Database, UnitOfWork

UNSET: Any = object()


class FeatureService:
    """Create, read, update and delete features; keep their learnings free of near-duplicates."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def list(self) -> list[Feature]:
        """Every feature, by name."""
        with self.db.read() as unit:
            return store.list_all(unit)

    def get(self, name: str) -> Feature:
        """One feature with its learnings."""
        with self.db.read() as unit:
            return self._require(unit, name)

    def create(
        self,
        name: str,
        display_name: str,
        description: str | None = None,
        acronym: str | None = None,
        knowledge_paths: Sequence[str] | None = None,
        context_files: Sequence[str] | None = None,
        architecture: str | None = None,
        boundaries: str | None = None,
        dependencies: Sequence[str] | None = None,
    ) -> Feature:
        """Add a feature; the name must be new."""
        fields: dict[str, Any] = {
            "name": check.name("name", name),
            "display_name": check.required_text("display_name", display_name, limit=200),
            "description": check.text("description", description),
            "acronym": check.text("acronym", acronym, limit=16),
            "knowledge_paths": check.path_list("knowledge_paths", knowledge_paths),
            "context_files": check.path_list("context_files", context_files),
            "architecture": check.text("architecture", architecture),
            "boundaries": check.text("boundaries", boundaries),
            "dependencies": check.text_list("dependencies", dependencies),
        }
        with self.db.write() as unit:
            if store.id_of(unit, name) is not None:
                raise ConflictError(f"a feature named {name!r} already exists; choose another name")
            self._check_dependencies(unit, name, fields["dependencies"])
            return store.create(unit, fields)

    def update(self, name: str, **changes: Any) -> Feature:
        """Change the given fields of a feature (None clears an optional text)."""
        allowed = {
            "display_name",
            "description",
            "acronym",
            "knowledge_paths",
            "context_files",
            "architecture",
            "boundaries",
            "dependencies",
        }
        unknown = sorted(set(changes) - allowed)
        if unknown:
            raise InvalidValueError("field", unknown[0], "one of " + ", ".join(sorted(allowed)))
        fields: dict[str, Any] = {}
        for key, value in changes.items():
            if key == "display_name":
                fields[key] = check.required_text(key, value, limit=200)
            elif key == "acronym":
                fields[key] = check.text(key, value, limit=16)
            elif key in ("knowledge_paths", "context_files"):
                fields[key] = check.path_list(key, value)
            elif key == "dependencies":
                fields[key] = check.text_list(key, value)
            else:
                fields[key] = check.text(key, value)
        with self.db.write() as unit:
            self._require(unit, name)
            if "dependencies" in fields:
                self._check_dependencies(unit, name, fields["dependencies"])
            feature = store.update(unit, name, fields)
            assert feature is not None
            return feature

    def delete(self, name: str) -> None:
        """Remove a feature no task uses."""
        with self.db.write() as unit:
            self._require(unit, name)
            using = store.tasks_using(unit, name)
            if using:
                shown = ", ".join(f"#{task_id}" for task_id in using)
                raise ConflictError(
                    f"feature {name!r} is used by tasks {shown}; move or delete those tasks first"
                )
            store.delete(unit, name)

    def add_context_file(self, name: str, file_path: str) -> Feature:
        """Register a project file as context of a feature (once)."""
        path = check.relative_path("file_path", file_path)
        with self.db.write() as unit:
            feature = self._require(unit, name)
            if path in feature.context_files:
                return feature
            updated = store.update(unit, name, {"context_files": [*feature.context_files, path]})
            assert updated is not None
            return updated

    def append_learning(
        self,
        feature_name: str,
        text: str,
        source: str = LearningSource.AGENT.value,
        reason: str | None = None,
        task_id: int | None = None,
    ) -> tuple[FeatureLearning, bool]:
        """Add a learning, or raise the hit count of a near-duplicate; returns it and whether it was new."""
        fields: dict[str, Any] = {
            "text": check.required_text("text", text),
            "source": check.choice("source", source, LearningSource).value,
            "reason": check.text("reason", reason),
            "task_id": check.positive_int("task_id", task_id),
        }
        with self.db.write() as unit:
            self._require(unit, feature_name)
            existing = [(item.id, item.text) for item in store.learnings(unit, feature_name)]
            duplicate = find_duplicate(fields["text"], existing)
            if duplicate is not None:
                bumped = store.bump_learning(unit, duplicate)
                assert bumped is not None
                return bumped, False
            return store.add_learning(unit, feature_name, fields), True

    def update_learning(
        self, learning_id: int, text: str | None = None, reason: str | None = UNSET
    ) -> FeatureLearning:
        """Edit a learning's text or reason."""
        fields: dict[str, Any] = {}
        if text is not None:
            fields["text"] = check.required_text("text", text)
        if reason is not UNSET:
            fields["reason"] = check.text("reason", reason)
        with self.db.write() as unit:
            learning = store.update_learning(unit, learning_id, fields)
            if learning is None:
                raise NotFoundError("learning", learning_id)
            return learning

    def delete_learning(self, learning_id: int) -> None:
        """Remove a learning."""
        with self.db.write() as unit:
            if not store.delete_learning(unit, learning_id):
                raise NotFoundError("learning", learning_id)

    def merge_learnings(self, keep_id: int, merge_ids: Sequence[int]) -> FeatureLearning:
        """Fold duplicates into one learning: their hit counts add up, they are removed."""
        with self.db.write() as unit:
            keep = store.get_learning(unit, keep_id)
            if keep is None:
                raise NotFoundError("learning", keep_id)
            hits = keep.hit_count
            for other_id in merge_ids:
                if other_id == keep_id:
                    continue
                other = store.get_learning(unit, other_id)
                if other is None:
                    raise NotFoundError("learning", other_id)
                if other.feature_name != keep.feature_name:
                    raise ConflictError(
                        f"learning {other_id} belongs to feature {other.feature_name!r}, "
                        f"not {keep.feature_name!r}; only learnings of one feature can be merged"
                    )
                hits += other.hit_count
                store.delete_learning(unit, other_id)
            merged = store.update_learning(unit, keep_id, {"hit_count": hits})
            assert merged is not None
            return merged

    def _require(self, unit: UnitOfWork, name: str) -> Feature:
        feature = store.get(unit, name)
        if feature is None:
            raise NotFoundError("feature", name, store.names(unit))
        return feature

    def _check_dependencies(self, unit: UnitOfWork, name: str, dependencies: builtins.list[str]) -> None:
        known = set(store.names(unit))
        for dependency in dependencies:
            if dependency == name:
                raise ConflictError(f"feature {name!r} cannot depend on itself")
            if dependency not in known:
                raise NotFoundError("feature", dependency, sorted(known))
