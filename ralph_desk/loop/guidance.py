"""What each recipe's session is asked to do: the "What to do" steps of its prompt, as data.

`{name}` stands for the ralph tool `name` as the agent calls it; a step is shown only when every tool it
names is enabled. `{feature}` and `{discipline}` stand for what the session is about.
"""

from __future__ import annotations

from ralph_desk.domain.enums import Recipe

NO_EDITS = "Do not change any file in the repository: this session shapes the plan, not the code."
SUMMARY = "End with a short summary of what you changed."

GUIDANCE: dict[Recipe, tuple[str, ...]] = {
    Recipe.BRAINDUMP: (
        "Read the input and turn it into features, disciplines and tasks.",
        "Before creating anything, call {list_features} and {list_disciplines}: extend what exists instead "
        "of creating near-duplicates (such as `auth` next to `authentication`).",
        "Create one feature per coherent area of the product with {create_feature}, with its description, "
        "architecture and boundaries where the input gives them.",
        "Create one discipline per kind of work with {create_discipline}.",
        "Create tasks with {create_task}: each small enough for one agent session, with acceptance criteria "
        "and dependencies; status draft while a task still needs detail, pending when it is ready to run.",
        NO_EDITS,
        "End with a short summary of what you created.",
    ),
    Recipe.YAP: (
        "Refine the tasks the input is about, and add the missing ones, within the existing features and "
        "disciplines.",
        "Look tasks up with {list_tasks} and {get_task} before changing them.",
        "Change fields with {update_task}; add tasks with {create_task}.",
        "Change a task's status with {set_task_status} only when the input asks for it.",
        NO_EDITS,
        SUMMARY,
    ),
    Recipe.RAMBLE: (
        "Refine the design of {feature}: description, architecture, boundaries, context files.",
        "Read it first with {get_feature}; change it with {update_feature}.",
        "Create a feature with {create_feature} only for an area that has none yet.",
        "Record design decisions later sessions must respect with {append_feature_learning}.",
        "Register the files central to the feature with {add_feature_context_file}.",
        NO_EDITS,
        SUMMARY,
    ),
    Recipe.DISCUSS: (
        "Refine {discipline}: its persona (system prompt), skills and conventions.",
        "Read it with {get_discipline} and change only it with {update_discipline}.",
        NO_EDITS,
        SUMMARY,
    ),
    Recipe.ENRICHMENT: (
        "Make each draft task ready to run: step-by-step pseudocode, concrete acceptance criteria and the "
        "files a session should read first.",
        "Read each draft with {get_task}, and the feature it belongs to with {get_feature}.",
        "Promote a draft with {enrich_task}; it becomes pending.",
        "If a draft is really several tasks, create the parts with {create_task} (with their dependencies) "
        "and narrow the draft with {update_task}.",
        NO_EDITS,
        SUMMARY,
    ),
    Recipe.OPUS_REVIEW: (
        "Review {feature}: is the done work really done, do the remaining tasks still make sense, what "
        "should the next sessions know?",
        "Read tasks with {list_tasks} and {get_task}.",
        "Adjust priorities and descriptions with {update_task}.",
        "Add follow-up tasks with {create_task}.",
        "Send a task that is not really done back to pending with {set_task_status}.",
        "Explain each change to a task in a comment ({add_task_comment}).",
        "Clarify the feature's description or boundaries with {update_feature}.",
        "Record what the feature's sessions should know with {append_feature_learning}.",
        "Finish with an entry in the progress log ({append_progress}).",
        NO_EDITS,
    ),
    Recipe.UNDERSTAND: (
        "Explore the repository read-only: do not create, change or delete any file.",
        "Relate the code to the project's plan with {list_features} and {list_tasks}.",
        "Your final message is the map itself, in Markdown; the loop saves it as `.ralph/codebase_map.md`. "
        "Cover the purpose, the architecture and main modules (with paths), entry points, the data model, "
        "how to build and test, the conventions, and where new work usually goes.",
    ),
    Recipe.IDE: ("Use the tools as the human asks.",),
}
