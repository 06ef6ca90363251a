"""FeatureService: features, their validation and conflicts, and learnings kept free of near-duplicates."""

from __future__ import annotations

import re

import pytest

from ralph_desk.domain.records import Change
from ralph_desk.services.disciplines import DisciplineService
from ralph_desk.services.errors import ConflictError, InvalidValueError, NotFoundError
from ralph_desk.services.features import FeatureService
from ralph_desk.services.tasks import TaskService
from ralph_desk.store.database import Database


def _heard(db: Database) -> list[Change]:
    heard: list[Change] = []
    db.subscribe(heard.extend)
    return heard


def test_a_created_feature_keeps_every_field(features: FeatureService) -> None:
    features.create("base", "Base")

    created = features.create(
        "auth",
        "Authentication",
        description="Sign in and out.",
        acronym="AUTH",
        knowledge_paths=["docs/auth.md"],
        context_files=["src\\auth\\login.py"],
        architecture="Sessions in cookies.",
        boundaries="No OAuth.",
        dependencies=["base"],
    )

    assert created == features.get("auth")
    assert (created.name, created.display_name, created.acronym) == ("auth", "Authentication", "AUTH")
    assert created.description == "Sign in and out."
    assert created.knowledge_paths == ("docs/auth.md",)
    assert created.context_files == ("src/auth/login.py",)
    assert (created.architecture, created.boundaries) == ("Sessions in cookies.", "No OAuth.")
    assert created.dependencies == ("base",)


def test_features_are_listed_by_name(features: FeatureService) -> None:
    features.create("zeta", "Zeta")
    features.create("alpha", "Alpha")

    assert [feature.name for feature in features.list()] == ["alpha", "zeta"]


def test_creating_a_feature_notifies_the_features_topic(db: Database, features: FeatureService) -> None:
    heard = _heard(db)

    created = features.create("auth", "Auth")

    assert heard == [Change("features", (created.id,))]


@pytest.mark.parametrize(
    ("field", "kwargs", "allowed"),
    [
        ("name", {"name": "Auth Module"}, "a-z, 0-9"),
        ("display_name", {"display_name": "  "}, "a non-empty text"),
        ("acronym", {"acronym": "A" * 11}, "1-10 letters or digits"),
        ("acronym", {"acronym": "UI/UX"}, "1-10 letters or digits"),
        ("display_name", {"display_name": "x" * 201}, "at most 200 characters"),
        ("context_files", {"context_files": "src/a.py"}, "a list of texts"),
        ("context_files[0]", {"context_files": ["/etc/passwd"]}, "relative to the project root"),
        ("knowledge_paths[0]", {"knowledge_paths": ["../outside.md"]}, "without '..'"),
    ],
)
def test_an_invalid_feature_field_is_refused_naming_field_value_and_what_is_allowed(
    features: FeatureService, field: str, kwargs: dict[str, object], allowed: str
) -> None:
    arguments: dict[str, object] = {"name": "auth", "display_name": "Auth", **kwargs}

    pattern = f"invalid {re.escape(field)}: .*allowed: .*{re.escape(allowed)}"
    with pytest.raises(InvalidValueError, match=pattern) as caught:
        features.create(**arguments)  # type: ignore[arg-type]

    assert caught.value.field == field
    assert features.list() == []


def test_a_second_feature_with_the_same_name_is_a_conflict(features: FeatureService) -> None:
    features.create("auth", "Auth")

    with pytest.raises(ConflictError, match="'auth' already exists"):
        features.create("auth", "Other")


def test_a_feature_cannot_depend_on_itself_or_on_an_unknown_feature(features: FeatureService) -> None:
    features.create("base", "Base")

    with pytest.raises(ConflictError, match="cannot depend on itself"):
        features.create("auth", "Auth", dependencies=["auth"])
    with pytest.raises(NotFoundError, match="no feature 'ghost'; known: base"):
        features.create("auth", "Auth", dependencies=["ghost"])


def test_an_unknown_feature_is_not_found_with_the_known_names(features: FeatureService) -> None:
    features.create("auth", "Auth")
    features.create("billing", "Billing")

    with pytest.raises(NotFoundError, match="no feature 'ghost'; known: auth, billing"):
        features.get("ghost")


def test_updating_changes_only_the_given_fields(features: FeatureService) -> None:
    features.create("auth", "Auth", description="Old", architecture="Cookies")

    updated = features.update("auth", description="New", context_files=["a.py"])

    assert (updated.description, updated.architecture) == ("New", "Cookies")
    assert updated.context_files == ("a.py",)
    assert features.get("auth") == updated


def test_updating_an_unknown_field_lists_the_allowed_ones(features: FeatureService) -> None:
    features.create("auth", "Auth")

    allowed = "allowed: one of acronym, architecture"
    with pytest.raises(InvalidValueError, match=f"invalid field: 'title'; {allowed}"):
        features.update("auth", title="renamed")


def test_updating_an_unknown_feature_is_not_found(features: FeatureService) -> None:
    with pytest.raises(NotFoundError, match="no feature 'ghost'"):
        features.update("ghost", description="x")


def test_deleting_an_unused_feature_removes_it(features: FeatureService) -> None:
    features.create("auth", "Auth")

    features.delete("auth")

    with pytest.raises(NotFoundError):
        features.get("auth")


def test_deleting_a_feature_used_by_tasks_is_a_conflict_naming_them(
    features: FeatureService, disciplines: DisciplineService, tasks: TaskService
) -> None:
    features.create("auth", "Auth")
    disciplines.create("backend", "Backend", "code", "#336699")
    first = tasks.create("auth", "backend", "Login")
    second = tasks.create("auth", "backend", "Logout")

    with pytest.raises(ConflictError, match=rf"feature 'auth' is used by tasks #{first.id}, #{second.id};"):
        features.delete("auth")

    assert features.get("auth").name == "auth"


def test_a_context_file_is_added_once_and_normalised(features: FeatureService) -> None:
    features.create("auth", "Auth")

    features.add_context_file("auth", "src\\auth.py")
    again = features.add_context_file("auth", "src/auth.py")

    assert again.context_files == ("src/auth.py",)


def test_an_absolute_context_file_is_refused(features: FeatureService) -> None:
    features.create("auth", "Auth")

    with pytest.raises(InvalidValueError, match=r"invalid file_path: '/abs\.py'"):
        features.add_context_file("auth", "/abs.py")


def test_a_new_learning_is_kept_with_its_source_and_reason(features: FeatureService) -> None:
    features.create("auth", "Auth")

    learning, is_new = features.append_learning(
        "auth", "Tokens expire after one hour", source="human", reason="security review"
    )

    assert is_new
    assert (learning.text, learning.source, learning.reason, learning.hit_count) == (
        "Tokens expire after one hour",
        "human",
        "security review",
        1,
    )
    assert features.get("auth").learnings == (learning,)


def test_a_near_duplicate_learning_raises_the_hit_count_instead_of_adding_one(
    features: FeatureService,
) -> None:
    features.create("auth", "Auth")
    first, _ = features.append_learning("auth", "the session token expires after one hour of use")

    again, is_new = features.append_learning("auth", "The session token expires after one hour of use!")

    assert not is_new
    assert again.id == first.id
    assert again.hit_count == 2
    assert len(features.get("auth").learnings) == 1


def test_a_learning_with_an_unknown_source_is_refused(features: FeatureService) -> None:
    features.create("auth", "Auth")

    allowed = "allowed: one of auto, agent, human"
    with pytest.raises(InvalidValueError, match=f"invalid source: 'robot'; {allowed}"):
        features.append_learning("auth", "x", source="robot")


def test_a_learning_can_be_edited_and_deleted(features: FeatureService) -> None:
    features.create("auth", "Auth")
    learning, _ = features.append_learning("auth", "old text", reason="why")

    edited = features.update_learning(learning.id, text="new text", reason=None)
    assert (edited.text, edited.reason) == ("new text", None)

    features.delete_learning(learning.id)
    assert features.get("auth").learnings == ()
    with pytest.raises(NotFoundError, match=f"no learning {learning.id}"):
        features.delete_learning(learning.id)
    with pytest.raises(NotFoundError, match="no learning 999"):
        features.update_learning(999, text="x")


def test_merging_learnings_adds_their_hit_counts_into_the_one_kept(features: FeatureService) -> None:
    features.create("auth", "Auth")
    keep, _ = features.append_learning("auth", "alpha beta gamma")
    features.append_learning("auth", "alpha beta gamma")
    other, _ = features.append_learning("auth", "delta epsilon")

    merged = features.merge_learnings(keep.id, [other.id, keep.id])

    assert merged.id == keep.id
    assert merged.hit_count == 3
    assert [item.id for item in features.get("auth").learnings] == [keep.id]


def test_learnings_of_different_features_cannot_be_merged(features: FeatureService) -> None:
    features.create("auth", "Auth")
    features.create("billing", "Billing")
    keep, _ = features.append_learning("auth", "one")
    other, _ = features.append_learning("billing", "two")

    with pytest.raises(ConflictError, match="belongs to feature 'billing', not 'auth'"):
        features.merge_learnings(keep.id, [other.id])

    assert len(features.get("billing").learnings) == 1
