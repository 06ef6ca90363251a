"""The secret that keys the trust file's hashes of env values: made once per user, kept owner-only.

It lives beside the trust file, never in a project, and is never shown or logged: without it a hash in
the trust file says nothing about the value it stands for.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path

from ralph_desk.project.errors import ProjectError

KEY_BYTES = 32
KEY_FILE_MODE = 0o600
KEY_FOLDER_MODE = 0o700
_MOST_READ = 4 * KEY_BYTES  # the hex text and a newline, with room to spare
_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK: int = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)
_BINARY: int = getattr(os, "O_BINARY", 0)


def key_file(trusted: Path) -> Path:
    """Where the key of the trust file `trusted` is kept: beside it (`trusted-commands.key`)."""
    return trusted.with_suffix(".key")


def keyed_hash(key: bytes, value: str) -> str:
    """The HMAC-SHA256 of `value` under `key`, as hex: equal values give equal hashes, and nothing else."""
    return hmac.new(key, value.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


def secret(trusted: Path) -> bytes:
    """The key of the trust file `trusted`, made (owner-only) the first time it is needed."""
    path = key_file(trusted)
    return _read(path) or _make(path)


def _refused(path: Path, why: object) -> ProjectError:
    return ProjectError(
        f"{path}: cannot use the key of the trusted commands: {why}; remove the file (a new key is made, "
        f"and the MCP server commands with env values are asked about again)"
    )


def _read(path: Path) -> bytes | None:
    """The key in `path`; None when there is none yet."""
    try:
        descriptor = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC | _BINARY)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise _refused(path, error) from None
    try:
        found = os.fstat(descriptor)
        if not stat.S_ISREG(found.st_mode):
            raise _refused(path, "it is not a plain file")
        text = os.read(descriptor, _MOST_READ + 1)
    finally:
        os.close(descriptor)
    try:
        key = bytes.fromhex(text.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        key = b""
    if len(key) != KEY_BYTES:
        raise _refused(path, f"it does not hold {KEY_BYTES} bytes as hex")
    return key


def _make(path: Path) -> bytes:
    """A new random key written to `path`, unless another process wrote one first (then that one)."""
    key = secrets.token_bytes(KEY_BYTES)
    temporary = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=KEY_FOLDER_MODE)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC | _BINARY
        descriptor = os.open(temporary, flags, KEY_FILE_MODE)
        try:
            os.write(descriptor, key.hex().encode("ascii") + b"\n")
        finally:
            os.close(descriptor)
        try:
            os.link(temporary, path)  # whole or not at all, and never over a key another process made
        except FileExistsError:
            pass
        finally:
            os.unlink(temporary)
    except OSError as error:
        raise _refused(path, error) from None
    kept = _read(path)
    if kept is None:
        raise _refused(path, "it vanished as it was made")
    return kept
