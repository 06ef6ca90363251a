"""The project's settings: one typed model of `.ralph/config.json`, checked, read and written here only."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.fields import FieldInfo

from ralph_desk.domain.checks import SETUP_NAME, Check
from ralph_desk.domain.enums import MergeStrategy, Recipe
from ralph_desk.domain.setting_bounds import (
    MAX_CHECK_TIMEOUT_S,
    MAX_CHECKS,
    MAX_COMMAND_TEXT,
    MAX_COST_USD,
    MAX_ITERATIONS,
    MAX_PARALLEL,
    MAX_RATE_WAIT_S,
    MAX_REVIEW_EVERY,
    MAX_SESSION_TIMEOUT_S,
    MAX_STUCK_THRESHOLD,
    MAX_TURNS,
    MAX_WORKTREE_FILES,
)
from ralph_desk.project import contained, trust
from ralph_desk.project.errors import ProjectError
from ralph_desk.project.paths import ProjectPaths

CONFIG_VERSION = 7
AGENTS = ("claude", "codex", "command", "rehearsal")
IDE_DISCONNECT = ("finish", "stop")
WHEN_ALL_DONE = ("stop", "wait")
RECIPES = tuple(recipe.value for recipe in Recipe)
MERGE_STRATEGIES = tuple(strategy.value for strategy in MergeStrategy)
OLD_NAMES: Mapping[str, str] = {"branch_name": "base_branch"}  # renamed in version 2, still read

DEFAULT_MODELS: Mapping[str, str | None] = {
    Recipe.BRAINDUMP.value: "opus",
    Recipe.YAP.value: "sonnet",
    Recipe.RAMBLE.value: "sonnet",
    Recipe.DISCUSS.value: "sonnet",
    Recipe.TASK_EXECUTION.value: "sonnet",
    Recipe.OPUS_REVIEW.value: "opus",
    Recipe.ENRICHMENT.value: "sonnet",
    Recipe.IDE.value: None,
    Recipe.UNDERSTAND.value: "sonnet",
}


class ConfigError(ProjectError):
    """Settings that break the rules; `problems` names each broken key with what is allowed."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Rule:
    """What one setting accepts, and the same said in words for the person who wrote something else."""

    accepts: Callable[[Any], bool]
    allowed: str
    since: int = 1  # the config version that added the key: older files may leave it out
    bounds: tuple[float, float] | None = None  # a number's least and greatest value (the window's boxes)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _whole(minimum: int, maximum: int, note: str = "", since: int = 1) -> Rule:
    return Rule(
        lambda value: _is_int(value) and minimum <= value <= maximum,
        f"a whole number from {minimum} to {maximum}{note}",
        since,
        (minimum, maximum),
    )


def _positive(maximum: float, note: str, since: int = 1) -> Rule:
    """A number above zero, at most `maximum` (seconds to wait: zero would never wait)."""
    return Rule(
        lambda value: _is_number(value) and 0 < value <= maximum,
        f"a number > 0 and ≤ {maximum:g}{note}",
        since,
        (0.0, maximum),
    )


def _true_or_false(allowed: str, since: int = 1) -> Rule:
    return Rule(lambda value: isinstance(value, bool), allowed, since)


def _text_or_null(what: str, since: int = 1) -> Rule:
    return Rule(lambda value: value is None or _is_text(value), f"null or {what}", since)


def _is_command(value: Any) -> bool:
    if value is None:
        return True
    return isinstance(value, list | tuple) and bool(value) and all(_is_text(word) for word in value)


def _is_names(value: Any) -> bool:
    return isinstance(value, list | tuple) and all(_is_text(word) for word in value)


def _is_relative_glob(value: Any) -> bool:
    """A glob of paths inside the project: relative, no `..`, no backslash (one spelling on every system)."""
    if not _is_text(value) or "\\" in value or value.startswith(("/", "~")) or ":" in value[:2]:
        return False
    return ".." not in value.split("/")


def _is_checks(value: Any) -> bool:
    if not isinstance(value, list | tuple) or len(value) > MAX_CHECKS:
        return False
    try:
        checks = [item if isinstance(item, Check) else Check.model_validate(item) for item in value]
    except ValueError:
        return False
    names = {check.name for check in checks}
    return len(names) == len(checks) and SETUP_NAME not in names


def _is_command_line(value: Any) -> bool:
    return value is None or (_is_text(value) and len(value) <= MAX_COMMAND_TEXT and "\x00" not in value)


def _is_worktree_files(value: Any) -> bool:
    return (
        isinstance(value, list | tuple)
        and len(value) <= MAX_WORKTREE_FILES
        and all(_is_relative_glob(item) and not any(mark in item for mark in "*?[") for item in value)
    )


CHECKS_ALLOWED = (
    f"a list of at most {MAX_CHECKS} checks with different names, each "
    '{"name": "tests", "run": "pytest -q", "timeout_s": 600, "required": true}: name 1-64 characters of '
    f"a-z, 0-9, '-' and '_' (not setup); run a command line for the platform's shell; timeout_s 1 to "
    f"{MAX_CHECK_TIMEOUT_S} seconds (default 600); required true (the task enters review only when it "
    "passes) or false (advisory)"
)


def _setting(default: Any, rule: Rule, factory: Callable[[], Any] | None = None) -> Any:
    """A field with its default and its rule (kept in the field's metadata, as `Annotated` would)."""
    info = (
        Field(description=rule.allowed, default_factory=factory)
        if factory
        else Field(default, description=rule.allowed)
    )
    info.metadata.append(rule)
    return info


class ProjectConfig(BaseModel):
    """Everything the loop and the window may be told in `.ralph/config.json`; invalid values are refused.

    Each setting's `Rule` is its one check (the words a refusal uses, its bounds); the window, the
    command line and the tools read the bounds from here.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: str = _setting("claude", Rule(lambda value: value in AGENTS, "one of " + ", ".join(AGENTS)))
    agent_bin: str | None = _setting(
        None, _text_or_null("the path of the agent's program (null: found on PATH)", since=2)
    )
    agent_command: tuple[str, ...] | None = _setting(
        None, Rule(_is_command, "null or a non-empty list of texts (the command and its arguments)")
    )
    models: Mapping[str, str | None] = _setting(
        None,
        Rule(lambda value: isinstance(value, Mapping), "an object of recipe name to model name"),
        factory=lambda: dict(DEFAULT_MODELS),
    )
    max_turns: int = _setting(50, _whole(1, MAX_TURNS, " (agent turns per session)", since=2))
    max_iterations: int = _setting(50, _whole(0, MAX_ITERATIONS, " (0: no limit)"))
    parallel: int = _setting(
        1, _whole(1, MAX_PARALLEL, " (agent sessions running at once, each in its task's worktree)", 4)
    )
    max_cost_usd: float | None = _setting(
        10.0,
        Rule(
            lambda value: value is None or (_is_number(value) and 0 <= value <= MAX_COST_USD),
            f"null (no budget) or a number ≥ 0 and ≤ {MAX_COST_USD:g} (US dollars)",
            bounds=(0.0, MAX_COST_USD),
        ),
    )
    session_timeout_s: int = _setting(1800, _whole(1, MAX_SESSION_TIMEOUT_S, " (seconds)"))
    stuck_threshold: int = _setting(3, _whole(1, MAX_STUCK_THRESHOLD))
    rate_limit_wait_s: float = _setting(
        60.0, _positive(MAX_RATE_WAIT_S, " (seconds to wait on a rate limit that names no reset time)", 2)
    )
    rate_limit_max_wait_s: float = _setting(
        3600.0,
        _positive(
            MAX_RATE_WAIT_S,
            " (seconds: the rate-limit wait doubles after each limit in a row, up to this)",
            3,
        ),
    )
    opus_review_every: int = _setting(0, _whole(0, MAX_REVIEW_EVERY, " (0: off)"))
    allow_edits: bool = _setting(True, Rule(lambda value: isinstance(value, bool), "true or false"))
    allowed_paths: tuple[str, ...] = _setting(
        (),
        Rule(
            lambda value: isinstance(value, list | tuple) and all(_is_relative_glob(item) for item in value),
            'a list of globs inside the project, such as "src/**" (empty: agents may edit anywhere)',
            since=3,
        ),
    )
    base_branch: str | None = _setting(None, _text_or_null("a branch name (null: the branch checked out)"))
    review_gate: bool = _setting(
        True,
        Rule(lambda value: isinstance(value, bool), "true (done work waits for review) or false", since=3),
    )
    merge_strategy: str = _setting(
        MergeStrategy.MERGE.value,
        Rule(lambda value: value in MERGE_STRATEGIES, "one of " + ", ".join(MERGE_STRATEGIES), since=3),
    )
    reviewer_agent: bool = _setting(
        False, Rule(lambda value: isinstance(value, bool), "true (an agent reviews a diff) or false", since=5)
    )
    review_skip_disciplines: tuple[str, ...] = _setting(
        (), Rule(_is_names, "a list of discipline names whose done work merges without review", since=3)
    )
    ide_disconnect: str = _setting(
        "finish",
        Rule(
            lambda value: value in IDE_DISCONNECT,
            "finish (the current agent session ends, then the loop stops) or stop (the agent is "
            "ended at once, its task back to pending): what a loop does when the IDE that started it "
            "goes away",
            since=4,
        ),
    )

    when_all_done: str = _setting(
        "stop",
        Rule(
            lambda value: value in WHEN_ALL_DONE,
            "stop (the window's loop ends once every task is done or skipped; new tasks wait for the next "
            "Start) or wait (it waits for new tasks)",
            since=7,
        ),
    )

    checks: tuple[Check, ...] = _setting((), Rule(_is_checks, CHECKS_ALLOWED, since=6))
    setup: str | None = _setting(
        None,
        Rule(
            _is_command_line,
            "null or a command line run once in each new task worktree (e.g. installing dependencies)",
            since=6,
        ),
    )
    worktree_files: tuple[str, ...] = _setting(
        (),
        Rule(
            _is_worktree_files,
            f"a list of at most {MAX_WORKTREE_FILES} paths inside the project (no wildcards), such as "
            '".env": files git ignores, copied into each new task worktree',
            since=6,
        ),
    )
    sandbox: bool = _setting(
        True,
        _true_or_false(
            "true (each session, check and setup runs confined: it writes only its worktree, where the "
            "computer has a sandbox) or false (they run as you)",
            since=7,
        ),
    )
    sandbox_network: bool = _setting(
        True,
        _true_or_false(
            "true or false (a confined command agent, its checks and setup run without a network; Claude "
            "Code and Codex keep it: they reach their model API)",
            since=7,
        ),
    )

    @model_validator(mode="before")
    @classmethod
    def _follow_the_rules(cls, values: Any) -> Any:
        """Every setting checked by its rule before pydantic reads it: ConfigError names each broken one."""
        if isinstance(values, Mapping):  # problems are named in the settings' order, as in the file
            values = {**{name: values[name] for name in RULES if name in values}, **values}
        problems = config_problems(_as_json(values), complete=False)
        if problems:
            raise ConfigError(problems)
        return values

    @classmethod
    def from_json(cls, raw: Any) -> ProjectConfig:
        """The settings a parsed `config.json` holds (defaults for keys left out); ConfigError if broken."""
        problems = config_problems(raw, complete=False)  # first: the file's own keys and version are named
        if problems:
            raise ConfigError(problems)
        values = {OLD_NAMES.get(key, key): value for key, value in raw.items() if key != "version"}
        values["models"] = {**DEFAULT_MODELS, **values.get("models", {})}
        return cls(**values)

    def to_json(self) -> dict[str, Any]:
        """The settings as `config.json` keeps them, with the file's version."""
        return {"version": CONFIG_VERSION, **_as_json({name: getattr(self, name) for name in RULES})}

    def changed(self, **changes: Any) -> ProjectConfig:
        """These settings with some changed; ConfigError naming every change that is not allowed."""
        if "models" in changes:
            changes["models"] = {**self.models, **changes["models"]}
        return ProjectConfig(**{**{name: getattr(self, name) for name in RULES}, **changes})


def _rule_of(info: FieldInfo) -> Rule:
    return next(item for item in info.metadata if isinstance(item, Rule))


RULES: Mapping[str, Rule] = {name: _rule_of(info) for name, info in ProjectConfig.model_fields.items()}
KNOWN_KEYS = ("version", *RULES)


def bounds(name: str) -> tuple[float, float]:
    """The least and greatest value of a numeric setting (KeyError for a setting that is not a number)."""
    found = RULES[name].bounds
    if found is None:
        raise KeyError(f"{name} is not a numeric setting")
    return found


def problem(name: str, value: Any) -> str | None:
    """What is wrong with one setting's value (None: allowed): the same words `config.json` gets."""
    rule = RULES[name]
    return None if rule.accepts(value) else _not_allowed(name, value, rule.allowed)


def _as_json(values: Any) -> Any:
    """Settings given as keyword arguments, in the form `config.json` holds them (lists, objects)."""
    if not isinstance(values, Mapping):
        return values
    return {key: _json_value(value) for key, value in values.items()}


def _json_value(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [item.model_dump() if isinstance(item, BaseModel) else item for item in value]
    return dict(value) if isinstance(value, Mapping) else value


def _unknown(key: str) -> str:
    return f"unknown key {key!r}; known keys: {', '.join(KNOWN_KEYS)}"


def _not_allowed(key: str, value: Any, allowed: str) -> str:
    return f"{key}: {json.dumps(value)} is not allowed; allowed: {allowed}"


def config_problems(raw: Any, complete: bool = True) -> list[str]:
    """What is wrong with a parsed `config.json`, one message per key; `complete` also names missing keys."""
    if not isinstance(raw, dict):
        return [f"must be a JSON object, not {type(raw).__name__}"]
    version = raw.get("version", CONFIG_VERSION)
    problems: list[str] = []
    if not (_is_int(version) and 1 <= version <= CONFIG_VERSION):
        problems.append(_not_allowed("version", version, f"1 to {CONFIG_VERSION}"))
        version = CONFIG_VERSION
    for key, value in raw.items():
        name = OLD_NAMES.get(key, key)
        rule = RULES.get(name)
        if key == "version":
            continue
        if rule is None:
            problems.append(_unknown(key))
        elif name != key and name in raw:
            problems.append(f"{key}: the old name of {name}; keep only {name}")
        elif not rule.accepts(value):
            problems.append(_not_allowed(key, value, rule.allowed))
    if complete:
        given = {OLD_NAMES.get(key, key) for key in raw}
        required = ["version", *(name for name, rule in RULES.items() if rule.since <= version)]
        problems.extend(f"{name}: missing" for name in required if name not in given)
    models = raw.get("models")
    if isinstance(models, Mapping):
        problems.extend(_model_problems(models))
    return problems


def _model_problems(models: Mapping[Any, Any]) -> list[str]:
    problems: list[str] = []
    for recipe, model in models.items():
        if recipe not in RECIPES:
            problems.append(f"models: unknown recipe {recipe!r}; allowed: {', '.join(RECIPES)}")
        elif model is not None and not _is_text(model):
            problems.append(_not_allowed(f"models.{recipe}", model, "null or a model name"))
    return problems


def default_config() -> dict[str, Any]:
    """The settings `init` writes into `.ralph/config.json` when no branch is checked out."""
    return ProjectConfig().to_json()


def read_config(paths: ProjectPaths) -> ProjectConfig:
    """The project's settings; ProjectError naming the file and every broken key (the file is kept)."""
    try:
        text = contained.read_bytes(paths.root, paths.config_file).decode("utf-8")
    except FileNotFoundError:
        raise ProjectError(
            f"{paths.config_file}: missing; run `ralph-desk init --force {paths.root}`"
        ) from None
    except UnicodeDecodeError as error:
        raise ProjectError(f"{paths.config_file}: not valid JSON: {error}") from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as error:
        raise ProjectError(f"{paths.config_file}: not valid JSON: {error}") from None
    try:
        return ProjectConfig.from_json(raw)
    except ConfigError as error:
        raise ProjectError(f"{paths.config_file}: {error}") from None


AGENT_PROGRAM_KEYS = ("agent_bin", "agent_command")
# The settings that name a program ralph-desk runs, or let it run unconfined: a cloned folder sets none
# unasked.
COMMAND_KEYS = (*AGENT_PROGRAM_KEYS, "checks", "setup", "sandbox")


def command_fingerprint(config: ProjectConfig) -> str | None:
    """The fingerprint of the settings that name a program to run; None when they name none."""
    settings = config.to_json()
    # The later keys join the fingerprint only when not their default: a project trusted before they
    # existed stays so.
    defaults = ProjectConfig().to_json()
    named = {
        key: settings[key]
        for key in COMMAND_KEYS
        if key in AGENT_PROGRAM_KEYS or settings[key] != defaults[key]
    }
    return trust.fingerprint(named) if any(value is not None for value in named.values()) else None


def _trust(paths: ProjectPaths, config: ProjectConfig) -> None:
    """A program named through ralph-desk's own writer is the person's choice: trusted from now on."""
    print_ = command_fingerprint(config)
    if print_ is not None:
        trust.record(paths.root, print_)


def _write_file(paths: ProjectPaths, config: ProjectConfig) -> None:
    contained.write_text(paths.root, paths.config_file, json.dumps(config.to_json(), indent=2) + "\n")


def write_config(paths: ProjectPaths, config: ProjectConfig) -> None:
    """Write the settings to `.ralph/config.json`, the whole file replaced at once; its program trusted."""
    _trust(paths, config)  # first: a trust file that cannot be written leaves config.json as it was
    _write_file(paths, config)


def update_config(paths: ProjectPaths, **changes: Any) -> ProjectConfig:
    """Change some settings in `.ralph/config.json`; ProjectError, nothing written, when any is bad."""
    try:
        current = read_config(paths)
        updated = current.changed(**changes)
    except ConfigError as error:
        raise ProjectError(f"{paths.config_file}: {error}") from None
    # Only a program this change named is trusted: saving another key keeps a cloned command untrusted.
    if command_fingerprint(updated) != command_fingerprint(current):
        _trust(paths, updated)
    _write_file(paths, updated)
    return updated
