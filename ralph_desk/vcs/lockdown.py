"""What keeps the desk's git from running a program that a repository, a worktree or an agent configured.

Fixed settings switch off the programs git knows by key (hooks, fsmonitor, pagers, editors, signing,
credential helpers, transports, gc), and the attribute files and size limit that would make a text file
look binary. Filter, textconv, external diff and merge drivers are named freely (`filter.<name>.clean`),
so the names a repository's configuration defines — in every file git reads for the call, and in every
file an `include`/`includeIf` names, whether its condition holds today or not — are found with
`git config --list` and neutralised for the call: filters get an empty command (git then runs none) and
`required=false`, textconv and diff commands an empty command (git fails rather than run one) and
`binary=auto`, merge drivers git's own `merge-file`. The lists are cached per location and read again
when any of those files changes.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

LIST_TIMEOUT_S = 30

# Command-scope settings: they win over every configuration file.
FIXED: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", os.devnull),
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("core.askPass", ""),
    ("core.useReplaceRefs", "false"),
    ("core.quotePath", "false"),
    ("credential.helper", ""),
    ("protocol.allow", "never"),
    ("diff.external", ""),
    # Nothing a repository configured makes a text file look binary in a diff (attributes files it names,
    # a tiny size limit); the desk's diff still checks each "binary" file's bytes itself (vcs.diffs).
    ("core.attributesFile", os.devnull),
    ("core.bigFileThreshold", "512m"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("log.showSignature", "false"),
    ("merge.verifySignatures", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("submodule.recurse", "false"),
    ("status.submoduleSummary", "false"),
)

# The environment the desk sets for every call; every other inherited GIT_* variable is dropped
# (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, GIT_EXTERNAL_DIFF, GIT_SSH_COMMAND, GIT_EXEC_PATH, ...).
FIXED_ENV: Mapping[str, str] = {
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_PAGER": "cat",
    "GIT_EDITOR": ":",
    "GIT_SEQUENCE_EDITOR": ":",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ATTR_NOSYSTEM": "1",
}
KEPT_ENV = frozenset(
    {"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "GIT_CEILING_DIRECTORIES"}
)

MERGE_FILE = "git merge-file -L ours -L base -L theirs --marker-size=%L %A %O %B"
_DRIVER_KEY = re.compile(
    r"(?P<section>filter|diff|merge)\.(?P<name>.+)\.(?P<key>clean|smudge|process|required|textconv|command|binary|driver)",
    re.S,
)
_INCLUDE_KEY = re.compile(r"include(?:if\..*)?\.path", re.S)


@dataclass(frozen=True)
class _Listed:
    stamps: tuple[tuple[str, tuple[int, ...] | None], ...]
    settings: tuple[tuple[str, str], ...]
    complete: bool  # False when git could not list it: the call is refused (fails closed), nothing cached


_cache: dict[tuple[str, ...], _Listed] = {}
_cache_lock = threading.Lock()


def base_environment() -> dict[str, str]:
    """The inherited environment without git's own variables, plus the desk's fixed ones."""
    kept = {key: value for key, value in os.environ.items() if not key.startswith("GIT_") or key in KEPT_ENV}
    return {**kept, **FIXED_ENV}


def environment(cwd: Path, location: Sequence[str], extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment of one git call in `cwd` with `location` options: nothing it configured runs."""
    settings = (*FIXED, *_neutralised(cwd, tuple(location)))
    env = base_environment()
    env["GIT_CONFIG_COUNT"] = str(len(settings))
    for index, (key, value) in enumerate(settings):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    env.update(extra or {})
    return env


class ConfigUnreadableError(RuntimeError):
    """A repository whose configuration could not be listed: git is not run there (it fails closed)."""


def _neutralised(cwd: Path, location: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    cache_key = (str(cwd), *location)
    with _cache_lock:
        known = _cache.get(cache_key)
    if known is not None and all(_stamp(Path(path)) == stamp for path, stamp in known.stamps):
        return known.settings
    listed = _list(cwd, location)
    if not listed.complete:
        raise ConfigUnreadableError(
            "its git configuration (or a file it includes) could not be read in full within "
            f"{LIST_TIMEOUT_S} s, so the programs it may name cannot be switched off: the desk runs no git "
            "there until `git config --list --includes` answers"
        )
    with _cache_lock:
        _cache[cache_key] = listed
    return listed.settings


def _list(cwd: Path, location: tuple[str, ...]) -> _Listed:
    """Read every configuration file git would read here (and every file it may include): driver names."""
    files: set[Path] = set(_candidates(cwd, location))
    names: set[tuple[str, str]] = set()
    pending: list[tuple[str, ...]] = [("config", "--list", "--null", "--show-origin", "--includes")]
    seen_includes: set[Path] = set()
    complete = True
    while pending:
        entries = _config_entries(cwd, location, pending.pop())
        complete = complete and entries is not None
        for origin, key, value in entries or ():
            if origin is not None:
                files.add(origin)
            match = _DRIVER_KEY.fullmatch(key)
            if match:
                names.add((match.group("section"), match.group("name")))
            if _INCLUDE_KEY.fullmatch(key) and value:
                target = _include_target(cwd, origin, value)
                if target not in seen_includes:
                    seen_includes.add(target)
                    files.add(target)
                    if target.is_file():
                        pending.append(("config", "--file", str(target), "--list", "--null", "--show-origin"))
    settings: list[tuple[str, str]] = []
    for section, name in sorted(names):
        settings.extend(_neutral(section, name))
    stamps = tuple((str(path), _stamp(path)) for path in sorted(files))
    return _Listed(stamps, tuple(settings), complete)


def _neutral(section: str, name: str) -> list[tuple[str, str]]:
    if section == "filter":
        return [(f"filter.{name}.{key}", "") for key in ("clean", "smudge", "process")] + [
            (f"filter.{name}.required", "false")
        ]
    if section == "diff":
        # `binary=auto`: git looks at the bytes, rather than a driver calling every file binary (or text)
        return [(f"diff.{name}.textconv", ""), (f"diff.{name}.command", ""), (f"diff.{name}.binary", "auto")]
    return [(f"merge.{name}.driver", MERGE_FILE)]


def _config_entries(
    cwd: Path, location: tuple[str, ...], args: tuple[str, ...]
) -> list[tuple[Path | None, str, str]] | None:
    """`(file, key, value)` per entry `git config` lists (file None: the command line, standard input)."""
    env = base_environment()
    env["GIT_CONFIG_COUNT"] = "0"
    try:
        result = subprocess.run(
            ["git", *location, *args],
            cwd=cwd,
            capture_output=True,
            timeout=LIST_TIMEOUT_S,
            env=env,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if result.returncode != 0:
        return None
    fields = os.fsdecode(result.stdout).split("\0")
    found: list[tuple[Path | None, str, str]] = []
    for origin, entry in zip(fields[0::2], fields[1::2], strict=False):
        key, _, value = entry.partition("\n")
        where = Path(origin.removeprefix("file:")) if origin.startswith("file:") else None
        found.append(((cwd / where) if where is not None else None, key, value))
    return found


def _include_target(cwd: Path, origin: Path | None, value: str) -> Path:
    target = Path(os.path.expanduser(value))
    if target.is_absolute():
        return target
    return (origin.parent if origin is not None else cwd) / target


def _candidates(cwd: Path, location: tuple[str, ...]) -> list[Path]:
    """Files that would change what git reads here if they appeared or changed."""
    home = Path.home()
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
    found = [Path("/etc/gitconfig"), home / ".gitconfig", Path(xdg) / "git" / "config", cwd / ".git"]
    found += [
        Path(os.environ[name]) for name in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM") if name in os.environ
    ]
    git_dir = next(
        (word.removeprefix("--git-dir=") for word in location if word.startswith("--git-dir=")), None
    )
    folder = Path(git_dir) if git_dir is not None else cwd / ".git"
    found += [folder / "config", folder / "config.worktree", folder / "commondir"]
    return found


def _stamp(path: Path) -> tuple[int, ...] | None:
    try:
        facts = path.lstat()
    except OSError:
        return None
    if stat.S_ISDIR(facts.st_mode):
        return (facts.st_ino,)  # a git folder changes with every index write; only its swap matters here
    return (facts.st_ino, facts.st_mtime_ns, facts.st_ctime_ns, facts.st_size)
