"""The `.ralph/` project folder: where things live, creating it, checking it, its settings."""

from __future__ import annotations

import json
import math
import os
import shutil
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ralph_desk.domain.enums import Recipe
from ralph_desk.store.urls import is_sqlite, sqlite_url

RALPH_DIR = ".ralph"
DB_URL_ENV = "RALPH_DB_URL"
PRIVATE_DIR_MODE = 0o700
CONFIG_VERSION = 1
TITLE_LIMIT = 200

GITIGNORE = """\
# Written by ralph-desk: runtime state stays out of version control.
db/
logs/
mcp/sessions/
"""


@dataclass(frozen=True)
class ProjectPaths:
    """Every path of one project's `.ralph/` folder (DESIGN §3)."""

    root: Path

    @classmethod
    def at(cls, root: str | os.PathLike[str]) -> ProjectPaths:
        """The paths of the project rooted at `root` (made absolute)."""
        return cls(Path(root).expanduser().resolve())

    @property
    def ralph(self) -> Path:
        return self.root / RALPH_DIR

    @property
    def db_dir(self) -> Path:
        return self.ralph / "db"

    @property
    def db_file(self) -> Path:
        return self.db_dir / "ralph.db"

    @property
    def mcp_dir(self) -> Path:
        return self.ralph / "mcp"

    @property
    def context_file(self) -> Path:
        return self.mcp_dir / "context.json"

    @property
    def sessions_dir(self) -> Path:
        return self.mcp_dir / "sessions"

    @property
    def clients_dir(self) -> Path:
        return self.mcp_dir / "clients"

    @property
    def learnings_file(self) -> Path:
        return self.ralph / "learnings.txt"

    @property
    def progress_file(self) -> Path:
        return self.ralph / "progress.txt"

    @property
    def logs_dir(self) -> Path:
        return self.ralph / "logs"

    @property
    def codebase_map(self) -> Path:
        return self.ralph / "codebase_map.md"

    @property
    def prd_file(self) -> Path:
        return self.ralph / "prd.json"

    @property
    def config_file(self) -> Path:
        return self.ralph / "config.json"

    def db_url(self, override: str | None = None) -> str:
        """The database URL: an explicit one, else `RALPH_DB_URL`, else the project's SQLite file."""
        return override or os.environ.get(DB_URL_ENV) or sqlite_url(self.db_file)


# --- errors and problems -------------------------------------------------------------------------


class ProjectError(Exception):
    """The project folder cannot be used as asked; the message says why and what to do."""


class ProjectExistsError(ProjectError):
    """`init` found a `.ralph/` folder and was not told to re-create it."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a project folder: the path it concerns and what is wrong."""

    path: Path | str  # a file or folder, or a database URL (its password hidden)
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


# --- configuration -------------------------------------------------------------------------------

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

AGENTS = ("claude", "codex", "command")


def default_config() -> dict[str, Any]:
    """The settings `init` writes into `.ralph/config.json`."""
    return {
        "version": CONFIG_VERSION,
        "agent": "claude",
        "agent_command": None,
        "models": dict(DEFAULT_MODELS),
        "max_iterations": 50,
        "max_cost_usd": 10.0,
        "session_timeout_s": 1800,
        "stuck_threshold": 3,
        "opus_review_every": 0,
        "allow_edits": True,
        "branch_name": None,
    }


Checker = Callable[[Any], str | None]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int_at_least(minimum: int, note: str = "") -> Checker:
    def check(value: Any) -> str | None:
        if _is_int(value) and value >= minimum:
            return None
        return f"a whole number ≥ {minimum}{note}"

    return check


def _check_version(value: Any) -> str | None:
    return None if _is_int(value) and 1 <= value <= CONFIG_VERSION else f"1 to {CONFIG_VERSION}"


def _check_agent(value: Any) -> str | None:
    return None if value in AGENTS else "one of " + ", ".join(AGENTS)


def _check_agent_command(value: Any) -> str | None:
    if value is None or (
        isinstance(value, list) and value and all(isinstance(item, str) and item for item in value)
    ):
        return None
    return "null or a non-empty list of texts (the command and its arguments)"


def _check_cost(value: Any) -> str | None:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if value is None or (number and math.isfinite(value) and value >= 0):
        return None
    return "null (no budget) or a number ≥ 0 (US dollars)"


def _check_bool(value: Any) -> str | None:
    return None if isinstance(value, bool) else "true or false"


def _check_branch(value: Any) -> str | None:
    return None if value is None or (isinstance(value, str) and value.strip()) else "null or a branch name"


def _check_model(value: Any) -> str | None:
    return None if value is None or (isinstance(value, str) and value.strip()) else "null or a model name"


CONFIG_KEYS: Mapping[str, Checker] = {
    "version": _check_version,
    "agent": _check_agent,
    "agent_command": _check_agent_command,
    "models": lambda value: None,  # checked key by key in _config_problems
    "max_iterations": _int_at_least(0, " (0: no limit)"),
    "max_cost_usd": _check_cost,
    "session_timeout_s": _int_at_least(1, " (seconds)"),
    "stuck_threshold": _int_at_least(1),
    "opus_review_every": _int_at_least(0, " (0: off)"),
    "allow_edits": _check_bool,
    "branch_name": _check_branch,
}


def config_problems(config: Any) -> list[str]:
    """What is wrong with a parsed `config.json`, one message per key (empty when it is fine)."""
    if not isinstance(config, dict):
        return [f"must be a JSON object, not {type(config).__name__}"]
    problems: list[str] = []
    for key, value in config.items():
        checker = CONFIG_KEYS.get(key)
        if checker is None:
            problems.append(f"unknown key {key!r}; known keys: {', '.join(CONFIG_KEYS)}")
            continue
        allowed = checker(value)
        if allowed is not None:
            problems.append(f"{key}: {json.dumps(value)} is not allowed; allowed: {allowed}")
    for key in CONFIG_KEYS:
        if key not in config:
            problems.append(f"{key}: missing")
    models = config.get("models")
    if isinstance(models, dict):
        recipes = [recipe.value for recipe in Recipe]
        for recipe, model in models.items():
            if recipe not in recipes:
                problems.append(f"models: unknown recipe {recipe!r}; allowed: {', '.join(recipes)}")
            elif _check_model(model) is not None:
                problems.append(
                    f"models.{recipe}: {json.dumps(model)} is not allowed; allowed: null or a model name"
                )
    elif "models" in config:
        problems.append(
            f"models: {json.dumps(models)} is not allowed; allowed: an object of recipe name to model name"
        )
    return problems


def read_config(paths: ProjectPaths) -> dict[str, Any]:
    """The project's settings (defaults filled in); ProjectError naming every broken key."""
    try:
        raw = paths.config_file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProjectError(
            f"{paths.config_file}: missing; run `ralph-desk init --force {paths.root}`"
        ) from None
    try:
        config = json.loads(raw)
    except json.JSONDecodeError as error:
        raise ProjectError(f"{paths.config_file}: not valid JSON: {error}") from None
    problems = [problem for problem in config_problems(config) if not problem.endswith(": missing")]
    if problems:
        raise ProjectError(f"{paths.config_file}: " + "; ".join(problems))
    merged = default_config()
    merged.update(config)
    merged["models"] = {**DEFAULT_MODELS, **config.get("models", {})}
    return merged


def write_config(paths: ProjectPaths, config: Mapping[str, Any]) -> None:
    """Write settings to `.ralph/config.json` (whole file replaced at once); ProjectError when invalid."""
    problems = config_problems(dict(config))
    if problems:
        raise ProjectError(f"{paths.config_file}: " + "; ".join(problems))
    _write_atomically(paths.config_file, json.dumps(config, indent=2) + "\n")


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


# --- init ----------------------------------------------------------------------------------------


def init_project(
    root: str | os.PathLike[str],
    title: str | None = None,
    force: bool = False,
    db_url: str | None = None,
) -> ProjectPaths:
    """Create `root/.ralph/` (DESIGN §3) with a migrated database whose project is titled `title`.

    With `force`, an existing folder gets fresh configuration (config.json, .gitignore, any missing
    folders and files) while its database, progress.txt, learnings.txt and logs are kept. An existing
    database keeps its project title unless `title` is given.
    """
    paths = ProjectPaths.at(root)
    if paths.root.exists() and not paths.root.is_dir():
        raise ProjectError(f"{paths.root}: exists and is not a folder")
    if paths.ralph.exists() and not force:
        raise ProjectExistsError(
            f"{paths.ralph}: already exists; use --force to re-create its configuration "
            "(the database, progress.txt and learnings.txt are kept)"
        )
    if paths.ralph.exists() and not paths.ralph.is_dir():
        raise ProjectError(f"{paths.ralph}: exists and is not a folder")
    project_title = _checked_title(title if title is not None else paths.root.name or "project")
    for folder in (paths.ralph, paths.db_dir, paths.mcp_dir, paths.clients_dir, paths.logs_dir):
        folder.mkdir(parents=True, exist_ok=True)
    paths.sessions_dir.mkdir(mode=PRIVATE_DIR_MODE, exist_ok=True)
    paths.sessions_dir.chmod(PRIVATE_DIR_MODE)
    for state_file in (paths.learnings_file, paths.progress_file):
        state_file.touch(exist_ok=True)
    _write_atomically(paths.ralph / ".gitignore", GITIGNORE)
    write_config(paths, default_config())
    _init_database(paths.db_url(db_url), project_title, overwrite=title is not None)
    return paths


def _checked_title(title: str) -> str:
    cleaned = title.strip()
    if not cleaned or len(cleaned) > TITLE_LIMIT or "\x00" in cleaned:
        raise ProjectError(f"invalid title {title!r}; allowed: 1 to {TITLE_LIMIT} characters")
    return cleaned


def _init_database(url: str, title: str, overwrite: bool) -> None:
    # Imported here: opening a database pulls in the ORM, which `ProjectPaths` users do not need.
    from ralph_desk.store import project_info
    from ralph_desk.store.database import Database

    database = Database(url)
    try:
        with database.write() as unit:
            existing = project_info.get(unit)
            if existing is None:
                project_info.upsert(unit, title, "")
            elif overwrite:
                project_info.upsert(unit, title, existing.description)
    finally:
        database.dispose()


# --- validate ------------------------------------------------------------------------------------


def validate_project(root: str | os.PathLike[str], db_url: str | None = None) -> list[Problem]:
    """Everything missing or broken in `root/.ralph/` (empty when the project is sound); changes nothing."""
    paths = ProjectPaths.at(root)
    if not paths.ralph.is_dir():
        return [
            Problem(paths.ralph, "missing: this folder is not a ralph-desk project; run `ralph-desk init`")
        ]
    problems: list[Problem] = []
    for folder in (paths.db_dir, paths.mcp_dir, paths.sessions_dir, paths.clients_dir, paths.logs_dir):
        if not folder.is_dir():
            problems.append(Problem(folder, "missing folder" if not folder.exists() else "not a folder"))
    if paths.sessions_dir.is_dir() and os.name == "posix":
        mode = paths.sessions_dir.stat().st_mode & 0o777
        if mode & 0o077:
            problems.append(
                Problem(
                    paths.sessions_dir, f"mode {mode:04o} lets others read session credentials; expected 0700"
                )
            )
    for state_file in (paths.learnings_file, paths.progress_file, paths.ralph / ".gitignore"):
        if not state_file.is_file():
            problems.append(Problem(state_file, "missing file" if not state_file.exists() else "not a file"))
    problems.extend(_config_file_problems(paths))
    problems.extend(_context_problems(paths))
    url = paths.db_url(db_url)
    sqlite_file = _sqlite_file(url)
    if sqlite_file is not None:
        problems.extend(_sqlite_problems(sqlite_file))
    else:
        problems.extend(_database_url_problems(url))
    return problems


def _sqlite_file(url: str) -> Path | None:
    """The file of a `sqlite:///FILE` URL (None for other databases and in-memory SQLite)."""
    if not is_sqlite(url):
        return None
    location = url.split("://", 1)[1].split("?", 1)[0]
    if not location.startswith("/") or location in ("/", "/:memory:"):
        return None
    return Path(location[1:])


def _config_file_problems(paths: ProjectPaths) -> list[Problem]:
    path = paths.config_file
    if not path.is_file():
        return [Problem(path, "missing file; `ralph-desk init --force` writes the default settings")]
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        return [Problem(path, f"not valid JSON: {error}")]
    return [Problem(path, message) for message in config_problems(config)]


CONTEXT_TYPES: Mapping[str, tuple[type, ...]] = {
    "session_id": (str,),
    "recipe": (str,),
    "discipline": (str, type(None)),
    "feature": (str, type(None)),
    "task_id": (int, type(None)),
    "disabled_tools": (list,),
}


def _context_problems(paths: ProjectPaths) -> list[Problem]:
    path = paths.context_file
    if not path.exists():
        return []
    try:
        context = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        return [Problem(path, f"not valid JSON: {error}")]
    if not isinstance(context, dict):
        return [Problem(path, f"must be a JSON object, not {type(context).__name__}")]
    problems: list[Problem] = []
    for key, types in CONTEXT_TYPES.items():
        if key not in context:
            continue
        value = context[key]
        if isinstance(value, bool) or not isinstance(value, types):
            allowed = " or ".join("null" if kind is type(None) else kind.__name__ for kind in types)
            problems.append(Problem(path, f"{key}: {json.dumps(value)} is not allowed; allowed: {allowed}"))
    recipe = context.get("recipe")
    if isinstance(recipe, str) and recipe not in {member.value for member in Recipe}:
        problems.append(
            Problem(
                path, f"recipe: {recipe!r} is not a recipe; allowed: {', '.join(r.value for r in Recipe)}"
            )
        )
    tools = context.get("disabled_tools")
    if isinstance(tools, list) and not all(isinstance(tool, str) for tool in tools):
        problems.append(Problem(path, "disabled_tools: every item must be a tool name (text)"))
    return problems


EXPECTED_TABLES = frozenset({"project", "features", "disciplines", "tasks", "task_signals"})


def _sqlite_problems(db_file: Path) -> list[Problem]:
    if not db_file.exists():
        return [Problem(db_file, "missing database; `ralph-desk init --force` creates it")]
    if not db_file.is_file():
        return [Problem(db_file, "not a file")]
    # Opened read-only through the standard library: a database we do not understand stays untouched.
    try:
        connection = sqlite3.connect(f"{db_file.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as error:
        return [Problem(db_file, f"cannot open the database: {error}")]
    try:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        revision = None
        if "alembic_version" in tables:
            row = connection.execute("SELECT version_num FROM alembic_version").fetchone()
            revision = row[0] if row else None
        check = connection.execute("PRAGMA quick_check").fetchone()
    except sqlite3.DatabaseError as error:
        return [Problem(db_file, f"unreadable: {error} (not a SQLite database, or damaged)")]
    finally:
        connection.close()
    if not tables:
        return [
            Problem(
                db_file, "empty database without the ralph-desk schema; `ralph-desk init --force` creates it"
            )
        ]
    if "alembic_version" not in tables or not tables >= EXPECTED_TABLES:
        return [Problem(db_file, "not a ralph-desk database (its tables are not ralph-desk's)")]
    from ralph_desk.store import migrate  # alembic is slow to import; only validate needs it

    problems: list[Problem] = []
    if revision is not None and revision not in migrate.known_revisions():
        problems.append(Problem(db_file, _too_new_message(revision)))
    if check is None or check[0] != "ok":
        problems.append(Problem(db_file, f"integrity check failed: {check[0] if check else 'no answer'}"))
    return problems


def _too_new_message(revision: str) -> str:
    from ralph_desk.store import migrate

    return (
        f"schema revision {revision!r} is newer than this ralph-desk knows "
        f"(newest known: {migrate.head_revision()!r}); upgrade ralph-desk to open it"
    )


def _database_url_problems(url: str) -> list[Problem]:
    from ralph_desk.store import migrate
    from ralph_desk.store.database import Database

    shown = _redacted(url)
    try:
        database = Database(url, migrate_on_open=False)
    except migrate.SchemaTooNewError as error:
        return [Problem(shown, str(error))]
    except Exception as error:  # any driver or network failure is a problem to report, not a crash
        detail = " ".join(str(error).split("(Background on this error")[0].split())
        return [Problem(shown, f"cannot open the database: {type(error).__name__}: {detail}")]
    database.dispose()
    return []


def _redacted(url: str) -> str:
    scheme, separator, rest = url.partition("://")
    if not separator or "@" not in rest:
        return url
    credentials, _, host = rest.rpartition("@")
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}"


def remove_project(paths: ProjectPaths) -> None:
    """Delete a project's `.ralph/` folder (used to undo a half-made demo)."""
    shutil.rmtree(paths.ralph, ignore_errors=True)
