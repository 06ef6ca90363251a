"""The `.ralph/` project folder: where things live (paths), its settings (config), checking it
(checks) and creating it (init). The names callers need are re-exported here."""

from ralph_desk.project import contained
from ralph_desk.project.checks import is_read_only, opening_problems, validate_project
from ralph_desk.project.config import (
    AGENTS,
    CONFIG_VERSION,
    DEFAULT_MODELS,
    ConfigError,
    ProjectConfig,
    config_problems,
    default_config,
    read_config,
    update_config,
    write_config,
)
from ralph_desk.project.errors import Problem, ProjectError, ProjectExistsError
from ralph_desk.project.init import init_project, remove_project
from ralph_desk.project.paths import DB_URL_ENV, RALPH_DIR, ProjectPaths

__all__ = [
    "AGENTS",
    "CONFIG_VERSION",
    "DB_URL_ENV",
    "DEFAULT_MODELS",
    "RALPH_DIR",
    "ConfigError",
    "Problem",
    "ProjectConfig",
    "ProjectError",
    "ProjectExistsError",
    "ProjectPaths",
    "config_problems",
    "contained",
    "default_config",
    "init_project",
    "is_read_only",
    "opening_problems",
    "read_config",
    "remove_project",
    "update_config",
    "validate_project",
    "write_config",
]
