"""Running `git`: one call shape that runs no program a repository, a worktree or an agent configured.

A task's worktree is reached through the repository that made it (`Checkout`: its own `--git-dir` and
`--work-tree`), never by letting git discover whatever `<worktree>/.git` names now.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

from ralph_desk.vcs import lockdown
from ralph_desk.vcs.places import Checkout, GitError, Where

GIT_TIMEOUT_S = 120
AGENT_NAME = "ralph-desk agent"
AGENT_EMAIL = "agent@ralph-desk.invalid"

_Out = TypeVar("_Out", str, bytes)


def run(
    repo: Where,
    *args: str,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    ok_codes: tuple[int, ...] | None = (0,),
) -> subprocess.CompletedProcess[str]:
    """Run `git args` in `repo`; GitError unless its exit code is one of `ok_codes` (None: any, read it)."""
    return _call(repo, args, env, ok_codes, lambda cwd, argv, call_env: _text(cwd, argv, call_env, stdin))


def read_bytes(repo: Where, *args: str, stdin: bytes | None = None) -> bytes:
    """The standard output of `git args` byte for byte, as stored (GitError when it fails): blob contents."""
    return _call(repo, args, None, (0,), lambda cwd, argv, call_env: _raw(cwd, argv, call_env, stdin)).stdout


def _call(
    repo: Where,
    args: tuple[str, ...],
    env: Mapping[str, str] | None,
    ok_codes: tuple[int, ...] | None,
    start: Callable[[Path, list[str], dict[str, str]], subprocess.CompletedProcess[_Out]],
) -> subprocess.CompletedProcess[_Out]:
    location: tuple[str, ...] = repo.location() if isinstance(repo, Checkout) else ()
    cwd = repo.work_tree if isinstance(repo, Checkout) else repo
    if not cwd.is_dir():
        raise GitError(args, 2, f"{cwd}: no such folder")
    try:
        result = start(cwd, ["git", *location, *args], lockdown.environment(cwd, location, env))
    except FileNotFoundError:
        raise GitError(args, 127, "the git program is not installed (or not on PATH)") from None
    except lockdown.ConfigUnreadableError as error:
        raise GitError(args, 128, str(error)) from None
    except subprocess.TimeoutExpired:
        raise GitError(args, -1, f"no answer within {GIT_TIMEOUT_S} s") from None
    if ok_codes is not None and result.returncode not in ok_codes:
        stderr = result.stderr if isinstance(result.stderr, str) else os.fsdecode(result.stderr)
        raise GitError(args, result.returncode, stderr)
    return result


def _text(
    cwd: Path, argv: list[str], env: dict[str, str], stdin: str | None
) -> subprocess.CompletedProcess[str]:
    # Decoded here, not by subprocess: its text mode turns a lone `\r` into a line break, and a file's `\r`
    # would then forge lines (`+…`, `diff --git …`) in a diff a person reads.
    given = None if stdin is None else stdin.encode("utf-8", "surrogateescape")
    raw = _raw(cwd, argv, env, given)
    return subprocess.CompletedProcess(raw.args, raw.returncode, _decoded(raw.stdout), _decoded(raw.stderr))


def _decoded(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _raw(
    cwd: Path, argv: list[str], env: dict[str, str], stdin: bytes | None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        argv, cwd=cwd, input=stdin, capture_output=True, timeout=GIT_TIMEOUT_S, env=env, check=False
    )


def out(repo: Where, *args: str) -> str:
    """The stripped standard output of `git args` (GitError when it fails)."""
    return run(repo, *args).stdout.strip()


def agent_identity() -> dict[str, str]:
    """The environment that makes git write as the ralph-desk agent."""
    return {
        "GIT_AUTHOR_NAME": AGENT_NAME,
        "GIT_AUTHOR_EMAIL": AGENT_EMAIL,
        "GIT_COMMITTER_NAME": AGENT_NAME,
        "GIT_COMMITTER_EMAIL": AGENT_EMAIL,
    }
