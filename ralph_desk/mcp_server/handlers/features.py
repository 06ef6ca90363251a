"""Feature tools: list, read, create and change features; their learnings and context files."""

from __future__ import annotations

from ralph_desk.domain.tools import (
    AddFeatureContextFileInput,
    AppendFeatureLearningInput,
    CreateFeatureInput,
    GetFeatureInput,
    ListFeaturesInput,
    UpdateFeatureInput,
)
from ralph_desk.mcp_server.binding import ToolCall, handles
from ralph_desk.mcp_server.results import ContextFiles, FeatureDetail, FeatureList, LearningAdded

PATH_FIELDS = ("knowledge_paths", "context_files")


@handles("list_features")
def list_features(call: ToolCall[ListFeaturesInput]) -> FeatureList:
    """Every feature, as briefs."""
    return FeatureList.of(call.services.features.list())


@handles("get_feature")
def get_feature(call: ToolCall[GetFeatureInput]) -> FeatureDetail:
    """One feature in full, with its learnings."""
    return FeatureDetail.model_validate(call.services.features.get(call.args.name))


@handles("create_feature")
def create_feature(call: ToolCall[CreateFeatureInput]) -> FeatureDetail:
    """The new feature."""
    return FeatureDetail.model_validate(
        call.services.features.create_input(call.paths_inside_root(PATH_FIELDS))
    )


@handles("update_feature")
def update_feature(call: ToolCall[UpdateFeatureInput]) -> FeatureDetail:
    """The feature after changing the fields the caller gave."""
    call.require_changes("name")
    return FeatureDetail.model_validate(
        call.services.features.update_input(call.paths_inside_root(PATH_FIELDS))
    )


@handles("append_feature_learning")
def append_feature_learning(call: ToolCall[AppendFeatureLearningInput]) -> LearningAdded:
    """The learning as kept: new, or the near duplicate whose hit count rose."""
    learning, is_new = call.services.features.append_learning(**call.changes())
    return LearningAdded.of(learning, is_new)


@handles("add_feature_context_file")
def add_feature_context_file(call: ToolCall[AddFeatureContextFileInput]) -> ContextFiles:
    """Register a context file on a feature."""
    path = call.inside_root("file_path", call.args.file_path)
    feature = call.services.features.add_context_file(call.args.feature_name, path)
    return ContextFiles(
        kind="feature", key=feature.name, file_path=path, context_files=list(feature.context_files)
    )
