"""Features and their learnings."""

from __future__ import annotations

import builtins
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ralph_desk.domain.enums import LearningSource
from ralph_desk.domain.learnings import DUPLICATE_THRESHOLD, word_set
from ralph_desk.domain.listing import Listing
from ralph_desk.domain.records import Feature, FeatureLearning
from ralph_desk.domain.tools import (
    AppendFeatureLearningInput,
    ClearableText,
    CreateFeatureInput,
    Text,
    UpdateFeatureInput,
)
from ralph_desk.services import validation as check
from ralph_desk.services.errors import ConflictError, InvalidValueError, NotFoundError, ServiceError
from ralph_desk.store import features as store
from ralph_desk.store.database import Database, UnitOfWork
from ralph_desk.store.writes import FeatureWrite, LearningWrite

UNSET: Any = object()


@dataclass(frozen=True)
class NewLearning:
    """A learning to append to a feature: its text, where it came from, why, and from which task."""

    text: str
    source: str = LearningSource.AGENT.value
    reason: str | None = None
    task_id: int | None = None


AppendedLearning = tuple[FeatureLearning, bool] | ServiceError
"""A learning as stored and whether it was new, or why it was not stored."""


def _learning_fields(feature_name: str, item: NewLearning) -> LearningWrite:
    """The columns of a learning, its fields checked as append_feature_learning's arguments."""
    given: dict[str, object] = {"feature_name": feature_name, "text": item.text, "source": item.source}
    optional = {"reason": check.blank_is_none(item.reason), "task_id": item.task_id}
    given.update({key: value for key, value in optional.items() if value is not None})
    args = check.arguments(AppendFeatureLearningInput, given, "append_feature_learning")
    source = args.source or LearningSource.AGENT
    return {"text": args.text, "source": source.value, "reason": args.reason, "task_id": args.task_id}


def append_learnings(
    unit: UnitOfWork, feature_name: str, items: Sequence[NewLearning], feature_id: int | None = None
) -> list[AppendedLearning]:
    """Append learnings to a feature within `unit`, each as `append_learning` would, one after the other.

    The feature's learnings are read once (ids and texts) and each text split into words once; a learning
    that repeats an earlier one of the same batch raises that one's hit count, as sequential appends do.
    `feature_id`, when the caller already knows it, saves looking the name up.
    """
    checked_items: list[LearningWrite | ServiceError] = []
    for item in items:
        try:
            checked_items.append(_learning_fields(feature_name, item))
        except ServiceError as error:
            checked_items.append(error)
    if all(isinstance(fields, ServiceError) for fields in checked_items):
        return [fields for fields in checked_items if isinstance(fields, ServiceError)]
    if feature_id is None:
        feature_id = store.id_of(unit, feature_name)
    if feature_id is None:
        missing = NotFoundError("feature", feature_name, store.names(unit))
        return [fields if isinstance(fields, ServiceError) else missing for fields in checked_items]
    # A key is ("old", learning id) for a stored learning, ("new", index into `new`) for one of this batch.
    stored = {learning.id: learning for learning in store.learnings_of(unit, feature_id, feature_name)}
    known = [(("old", learning.id), word_set(learning.text)) for learning in stored.values()]
    new: list[LearningWrite] = []
    keys: list[tuple[str, int] | ServiceError] = []
    for fields in checked_items:
        if isinstance(fields, ServiceError):
            keys.append(fields)
            continue
        words = word_set(fields["text"])
        similar = _most_similar(words, known)
        if similar is None:
            similar = ("new", len(new))
            new.append(fields)
            known.append((similar, words))
        keys.append(similar)
    hits = Counter(key for key in keys if not isinstance(key, ServiceError))
    added = store.add_learnings(
        unit,
        feature_id,
        feature_name,
        [{**fields, "hit_count": hits["new", index]} for index, fields in enumerate(new)],
    )
    bumps = {key[1]: count for key, count in hits.items() if key[0] == "old"}
    store.bump_learnings(unit, bumps)
    finals = {("new", index): record for index, record in enumerate(added)}
    finals.update(
        {("old", i): replace(stored[i], hit_count=stored[i].hit_count + more) for i, more in bumps.items()}
    )
    # Each result shows the hit count just after its own append, as one call per learning would return it.
    results: list[AppendedLearning] = []
    seen: Counter[tuple[str, int]] = Counter()
    for outcome in keys:
        if isinstance(outcome, ServiceError):
            results.append(outcome)
            continue
        seen[outcome] += 1
        final = finals[outcome]
        results.append(
            (
                replace(final, hit_count=final.hit_count - hits[outcome] + seen[outcome]),
                outcome[0] == "new" and seen[outcome] == 1,
            )
        )
    return results


def _most_similar(
    words: frozenset[str], known: Sequence[tuple[tuple[str, int], frozenset[str]]]
) -> tuple[str, int] | None:
    """The key of the most similar known text at or above the threshold (the later one on a tie), if any."""
    best_key: tuple[str, int] | None = None
    best_score = DUPLICATE_THRESHOLD
    for key, other in known:
        score = 1.0 if not words and not other else len(words & other) / len(words | other)
        if score >= best_score:
            best_key, best_score = key, score
    return best_key


UPDATABLE_FIELDS = tuple(name for name in UpdateFeatureInput.model_fields if name != "name")
# What None means in a plain update: the clearing value of update_feature's argument (none: cleared as None).
CLEARED: dict[str, object] = {
    "description": "",
    "architecture": "",
    "boundaries": "",
    "knowledge_paths": [],
    "context_files": [],
    "dependencies": [],
}


def _columns(args: CreateFeatureInput | UpdateFeatureInput, names: Collection[str]) -> FeatureWrite:
    """The feature columns of the input's fields `names`: an empty text and a missing list clear theirs."""
    fields: FeatureWrite = {}
    if "display_name" in names and args.display_name is not None:
        fields["display_name"] = args.display_name
    if "description" in names:
        fields["description"] = check.text_or_none(args.description)
    if "acronym" in names:
        fields["acronym"] = args.acronym
    if "knowledge_paths" in names:
        fields["knowledge_paths"] = check.paths("knowledge_paths", args.knowledge_paths)
    if "context_files" in names:
        fields["context_files"] = check.paths("context_files", args.context_files)
    if "architecture" in names:
        fields["architecture"] = check.text_or_none(args.architecture)
    if "boundaries" in names:
        fields["boundaries"] = check.text_or_none(args.boundaries)
    if "dependencies" in names:
        fields["dependencies"] = list(dict.fromkeys(args.dependencies or ()))
    return fields


class FeatureService:
    """Create, read, update and delete features; keep their learnings free of near-duplicates."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def list(self) -> Listing[Feature]:
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
        """Add a feature from plain values (the window, import-prd, the demo), checked as create_feature's."""
        given = {
            "name": name,
            "display_name": display_name,
            "description": description,
            "acronym": acronym,
            "knowledge_paths": knowledge_paths,
            "context_files": context_files,
            "architecture": architecture,
            "boundaries": boundaries,
            "dependencies": dependencies,
        }
        optional = ("description", "acronym", "architecture", "boundaries")
        values = {
            key: check.blank_is_none(value) if key in optional else value for key, value in given.items()
        }
        arguments = {key: value for key, value in values.items() if value is not None}
        return self.create_input(check.arguments(CreateFeatureInput, arguments, "create_feature"))

    def create_input(self, args: CreateFeatureInput) -> Feature:
        """Add a feature; the name must be new and its dependencies existing features."""
        fields = _columns(args, type(args).model_fields)
        fields["name"] = args.name
        with self.db.write() as unit:
            if store.id_of(unit, args.name) is not None:
                raise ConflictError(f"a feature named {args.name!r} already exists; choose another name")
            self._check_dependencies(unit, args.name, fields.get("dependencies", []))
            return store.create(unit, fields)

    def update(self, name: str, **changes: Any) -> Feature:
        """Change the given fields from plain values (None clears an optional one, a list replaces the whole
        list), checked as update_feature's arguments."""
        unknown = sorted(set(changes) - set(UPDATABLE_FIELDS))
        if unknown:
            raise InvalidValueError("field", unknown[0], "one of " + ", ".join(sorted(UPDATABLE_FIELDS)))
        if "display_name" in changes and changes["display_name"] is None:
            raise InvalidValueError("display_name", None, "a non-empty text (it cannot be cleared)")
        values = {key: CLEARED.get(key) if value is None else value for key, value in changes.items()}
        args = check.arguments(UpdateFeatureInput, {"name": name, **values}, "update_feature")
        return self.update_input(args, set(changes))

    def update_input(self, args: UpdateFeatureInput, names: Collection[str] | None = None) -> Feature:
        """Change the feature's fields `names` (by default those the arguments set to a value)."""
        if names is None:
            names = {key for key in args.model_fields_set if getattr(args, key) is not None}
        fields = _columns(args, names)
        with self.db.write() as unit:
            self._require(unit, args.name)
            if "dependencies" in fields:
                self._check_dependencies(unit, args.name, fields["dependencies"])
            feature = store.update(unit, args.name, fields)
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
        item = NewLearning(text, source, reason, task_id)
        with self.db.write() as unit:
            [result] = append_learnings(unit, feature_name, [item])
        if isinstance(result, ServiceError):
            raise result
        return result

    def append_learnings(
        self, feature_name: str, items: Sequence[NewLearning]
    ) -> builtins.list[AppendedLearning]:
        """Append learnings in one transaction, each as `append_learning` would (a refused one: its error)."""
        with self.db.write() as unit:
            return append_learnings(unit, feature_name, items)

    def update_learning(
        self, learning_id: int, text: str | None = None, reason: str | None = UNSET
    ) -> FeatureLearning:
        """Edit a learning's text or reason."""
        fields: LearningWrite = {}
        if text is not None:
            fields["text"] = check.value(Text, "text", text)
        if reason is not UNSET:
            fields["reason"] = check.value(ClearableText | None, "reason", reason)
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
