"""Trust on first use: which agent programs a person allowed per project, kept outside every project."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ralph_desk.domain.records import Discipline, McpServerSpec
from ralph_desk.project import contained, trust_key
from ralph_desk.project.errors import ProjectError

TRUST_FILE_ENV = "RALPH_DESK_TRUST_FILE"  # another place for the trust file (tests, a portable setup)
TRUST_FILE_MODE = 0o600
TRUST_FOLDER_MODE = 0o700


def trust_file() -> Path:
    """Where this computer keeps the trusted fingerprints: `$RALPH_DESK_TRUST_FILE`, else the config dir."""
    given = os.environ.get(TRUST_FILE_ENV, "").strip()
    if given:
        return Path(given).expanduser().absolute()
    import platformdirs

    return Path(platformdirs.user_config_dir("ralph-desk")) / "trusted-commands.json"


def fingerprint(settings: Mapping[str, Any]) -> str:
    """The sha256 of the command-bearing settings, the same for the same settings whatever their order."""
    text = json.dumps({key: settings[key] for key in sorted(settings)}, sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


PROGRAMS = ""  # the agent program config.json names
SERVERS = "mcp_servers"  # the stdio MCP servers the disciplines in the database start


def _key(root: Path, part: str = PROGRAMS) -> str:
    return str(root.resolve()) + (f"#{part}" if part else "")


# Env variables a loader, shell or interpreter reads at start to run more code (named in the prompt).
CODE_RUNNING_NAMES = frozenset(
    {
        *("BASH_ENV", "ENV", "ZDOTDIR", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "IFS", "PATH"),
        *("NODE_OPTIONS", "NODE_PATH", "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB"),
        *("PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONINSPECT"),
        *("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH", "DOTNET_STARTUP_HOOKS"),
        *("LUA_INIT", "LUA_PATH", "GCONV_PATH", "EDITOR", "VISUAL", "PAGER", "BROWSER", "SSH_ASKPASS"),
    }
)
CODE_RUNNING_PREFIXES = ("LD_", "DYLD_", "GIT_", "NPM_CONFIG_", "BUN_", "DENO_", "UV_", "PIP_")
# The servers' fingerprint since env values count (v2). A record made before, from env names alone,
# never matches it: such a project is asked about once again rather than trusted with unknown values.
SERVERS_VERSION = "command+args+env-hmac-sha256"


def runs_code(name: str) -> bool:
    """Whether the env variable `name` is one a loader, shell or interpreter reads to run other code."""
    upper = name.upper()  # Windows reads env names whatever their case
    return upper in CODE_RUNNING_NAMES or upper.startswith(CODE_RUNNING_PREFIXES)


def server_commands(disciplines: Iterable[Discipline]) -> list[dict[str, Any]]:
    """Each distinct stdio server program the disciplines start: command, args, and each env name with a
    keyed hash of its value (never the value: it may be a secret). A URL server starts no local program,
    so it is not here."""
    specs = [spec for discipline in disciplines for spec in discipline.mcp_servers]
    specs = [spec for spec in specs if spec.command is not None]
    secret = trust_key.secret(trust_file()) if any(spec.env for spec in specs) else b""
    found = {fingerprint(entry): entry for entry in (_server_entry(spec, secret) for spec in specs)}
    return [found[key] for key in sorted(found)]


def _server_entry(spec: McpServerSpec, secret: bytes) -> dict[str, Any]:
    hashes = {name: trust_key.keyed_hash(secret, value) for name, value in sorted(spec.env.items())}
    return {"command": spec.command, "args": list(spec.args), "env": hashes}


def servers_fingerprint(disciplines: Iterable[Discipline]) -> str | None:
    """The fingerprint of the stdio server programs the disciplines start; None when they start none."""
    commands = server_commands(disciplines)
    return fingerprint({SERVERS: commands, "version": SERVERS_VERSION}) if commands else None


def shown_command(entry: Mapping[str, Any]) -> str:
    """A stdio server's program as the person reads it: its command line, with the env names it is given
    and, by name, those that can make it run other code."""
    line = shlex.join([entry["command"], *entry["args"]])
    names = sorted(entry["env"])
    if not names:
        return line
    risky = [name for name in names if runs_code(name)]
    warned = f"; {', '.join(risky)} can make it run other code" if risky else ""
    return f"{line} (env: {', '.join(names)}{warned})"


def _read(path: Path) -> dict[str, str]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ProjectError(
            f"{path}: cannot read the trusted agent commands: {error}; "
            f"remove the file (every project's agent command is then asked about again)"
        ) from None
    if not isinstance(raw, dict):
        return {}
    return {str(root): str(value) for root, value in raw.items() if isinstance(value, str)}


def is_trusted(root: Path, print_: str, part: str = PROGRAMS) -> bool:
    """Whether the person allowed the settings (`part`) with this fingerprint for the project at `root`."""
    return _read(trust_file()).get(_key(root, part)) == print_


def record(root: Path, print_: str, part: str = PROGRAMS) -> Path:
    """Remember that the person allowed these settings for `root` (written at once, owner-only); the file."""
    path = trust_file()
    trusted = _read(path)
    if trusted.get(_key(root, part)) == print_:
        return path
    trusted[_key(root, part)] = print_
    text = json.dumps(trusted, indent=2, sort_keys=True) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=TRUST_FOLDER_MODE)
        return contained.write_text(
            path.parent, path, text, mode=TRUST_FILE_MODE, folder_mode=TRUST_FOLDER_MODE
        )
    except OSError as error:
        raise ProjectError(f"{path}: cannot record the trusted agent command: {error}") from None
