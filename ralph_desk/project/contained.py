"""Files inside a project folder, reached without following links: nothing read or written here leaves it.

Every folder from the project root down is opened one name at a time with `O_NOFOLLOW` (through the
folder's descriptor, so a folder swapped for a link between two steps is refused too), and so is the
file itself. A link anywhere below the root is refused with a `LinkRefusedError` that names it.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TextIO, cast

from ralph_desk.project.errors import ProjectError

_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)

if sys.platform == "win32":
    import msvcrt

    def _take_append_lock(descriptor: int) -> None:
        """Wait for the file's append lock: byte 0, which every appender locks (Windows retries ~10 s)."""
        msvcrt.locking(descriptor, msvcrt.LK_LOCK, 1)

else:

    def _take_append_lock(descriptor: int) -> None:
        """Wait for the file's append lock (released when the descriptor closes)."""
        import fcntl  # POSIX only, imported where used: every module imports anywhere (test_portable)

        fcntl.flock(descriptor, fcntl.LOCK_EX)


_DIRECTORY: int = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)
_BINARY: int = getattr(os, "O_BINARY", 0)
# Where the OS cannot open a name relative to a folder's descriptor (Windows), each step is lstat-checked.
_BY_DESCRIPTOR = bool(_NOFOLLOW and _DIRECTORY) and os.open in os.supports_dir_fd
_FCHMOD = getattr(os, "fchmod", None)
_LINK_ERRORS = (errno.ELOOP, errno.EMLINK, errno.ENOTDIR)
# Git worktrees of the project (DESIGN §11) hold the project's own files, links included: not state files.
UNCHECKED_FOLDERS = frozenset({"worktrees"})
PRIVATE_FILE_MODE = 0o600
PRIVATE_DIR_MODE = 0o700
FILE_MODE = 0o644
DIR_MODE = 0o755


class LinkRefusedError(ProjectError):
    """A path inside the project is a symbolic link, or leads outside it: ralph-desk never follows one."""

    def __init__(self, link: Path, root: Path, what: str = "is a symbolic link") -> None:
        super().__init__(
            f"{link}: {what}; ralph-desk reads and writes only plain files and folders inside the project "
            f"{root} (replace it with a plain file; `ralph-desk init --force` does so for .ralph/)"
        )
        self.link = link


def parts_below(root: Path, path: Path) -> tuple[str, ...]:
    """The names leading from `root` to `path`; refused when `path` is not below `root`."""
    try:
        relative = Path(os.path.normpath(path)).relative_to(root)
    except ValueError:
        raise LinkRefusedError(path, root, "is outside the project") from None
    if not relative.parts:
        raise LinkRefusedError(path, root, "is the project folder itself, not a file in it")
    return relative.parts


def is_link(path: Path) -> bool:
    """Whether `path` itself is a symbolic link."""
    try:
        return path.is_symlink()
    except OSError:
        return False


@contextmanager
def _folder(root: Path, names: tuple[str, ...], create: bool, mode: int) -> Iterator[int | None]:
    """A descriptor of `root/names…`, each step taken without following a link (None without dir_fd)."""
    if not _BY_DESCRIPTOR:
        _check_steps(root, names, create, mode)
        yield None
        return
    descriptor = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        for depth in range(len(names)):
            descriptor = _step(root, names[: depth + 1], descriptor, create, mode)
        yield descriptor
    finally:
        os.close(descriptor)


def _step(root: Path, names: tuple[str, ...], parent: int, create: bool, mode: int) -> int:
    """Open the folder `names[-1]` inside `parent` (closed once the child is open), refusing a link."""
    name = names[-1]
    try:
        if create:
            with suppress(FileExistsError):
                os.mkdir(name, mode, dir_fd=parent)
        child = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=parent)
    except OSError as error:
        _refuse_link(root, names, error, parent)
        raise
    os.close(parent)
    return child


def _refuse_link(root: Path, names: tuple[str, ...], error: OSError, parent: int | None) -> None:
    """Raise `LinkRefusedError` when `error` came from meeting a link at `root/names…`."""
    if error.errno not in _LINK_ERRORS:
        return
    try:
        found = os.lstat(names[-1], dir_fd=parent) if parent is not None else os.lstat(root.joinpath(*names))
    except OSError:
        return
    if stat.S_ISLNK(found.st_mode):
        raise LinkRefusedError(root.joinpath(*names), root) from None


def _check_steps(root: Path, names: tuple[str, ...], create: bool, mode: int) -> None:
    """Without descriptors: refuse any step that is a link, creating missing folders when asked."""
    for depth in range(1, len(names) + 1):
        step = root.joinpath(*names[:depth])
        if is_link(step):
            raise LinkRefusedError(step, root)
        if create and not step.exists():
            with suppress(FileExistsError):
                step.mkdir(mode)


def open_descriptor(
    root: Path, path: Path, flags: int, mode: int = FILE_MODE, folder_mode: int = DIR_MODE
) -> int:
    """`os.open` of `path` below `root`, never through a link; with `O_CREAT`, missing folders are made."""
    names = parts_below(root, path)
    with _folder(root, names[:-1], bool(flags & os.O_CREAT), folder_mode) as parent:
        full = flags | _NOFOLLOW | _CLOEXEC | _BINARY
        try:
            if parent is None:
                if is_link(path):
                    raise LinkRefusedError(path, root)
                return os.open(path, full, mode)
            return os.open(names[-1], full, mode, dir_fd=parent)
        except OSError as error:
            if error.errno == errno.EEXIST and flags & os.O_EXCL and is_link(path):
                raise LinkRefusedError(path, root) from None
            _refuse_link(root, names, error, parent)
            raise


def open_text(root: Path, path: Path, how: str = "r", mode: int = FILE_MODE) -> TextIO:
    """A text stream on `path` below `root` (`how`: "r", "a", "w" or "x"), opened without following links."""
    flags = {
        "r": os.O_RDONLY,
        "a": os.O_WRONLY | os.O_APPEND | os.O_CREAT,
        "w": os.O_WRONLY | os.O_TRUNC | os.O_CREAT,
        "x": os.O_WRONLY | os.O_CREAT | os.O_EXCL,
    }[how]
    descriptor = open_descriptor(root, path, flags, mode)
    stream_mode = "r" if how == "r" else "a" if how == "a" else "w"
    return cast(TextIO, os.fdopen(descriptor, stream_mode, encoding="utf-8", errors="replace", buffering=1))


def read_bytes(root: Path, path: Path) -> bytes:
    """The bytes of `path` below `root` (FileNotFoundError when there is none)."""
    descriptor = open_descriptor(root, path, os.O_RDONLY)
    with os.fdopen(descriptor, "rb") as stream:
        return stream.read()


def read_text(root: Path, path: Path, missing: str | None = None) -> str:
    """The text of `path` below `root` (undecodable bytes replaced); `missing` when there is no such file."""
    try:
        return read_bytes(root, path).decode("utf-8", errors="replace")
    except FileNotFoundError:
        if missing is None:
            raise
        return missing


# Why a write found no room, in words: a full disk, a quota, or the largest file allowed.
NO_ROOM = {
    errno.ENOSPC: "the disk is full (no space left on the device)",
    errno.EDQUOT: "the disk quota is used up",
    errno.EFBIG: "the file has reached the largest size allowed",
}


def append_bytes(root: Path, path: Path, data: bytes, mode: int = FILE_MODE) -> None:
    """Append one entry whole or not at all; appenders of the file take turns (a lock), never interleave.

    A write the disk cuts short is undone (the file goes back to its old length), and the refusal
    says why there was no room.
    """
    descriptor = open_descriptor(root, path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, mode)
    try:
        _take_append_lock(descriptor)
        start = os.fstat(descriptor).st_size
        try:
            written = 0
            while written < len(data):
                written += os.write(descriptor, data[written:])
        except OSError as error:
            with suppress(OSError):
                os.ftruncate(descriptor, start)
            if error.errno in NO_ROOM:
                raise ProjectError(
                    f"could not add to {path.name}: {NO_ROOM[error.errno]}; nothing of the entry was "
                    "written — free some space and try again"
                ) from None
            raise
    finally:
        os.close(descriptor)


def write_text(root: Path, path: Path, text: str, mode: int = FILE_MODE, folder_mode: int = DIR_MODE) -> Path:
    """Replace `path`'s text at once (a reader sees the old text or the new), refusing a link in its place."""
    names = parts_below(root, path)
    with _folder(root, names[:-1], True, folder_mode) as parent:
        if _is_link_at(path, names[-1], parent):
            raise LinkRefusedError(path, root)
        # The thread too: two threads of one process (parallel sessions) may replace one file at once.
        temporary = f".{names[-1]}.tmp-{os.getpid()}-{threading.get_ident()}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NOFOLLOW | _CLOEXEC | _BINARY
        target = temporary if parent is not None else str(path.with_name(temporary))
        descriptor = os.open(target, flags, mode, dir_fd=parent)
        try:
            if _FCHMOD is not None:
                _FCHMOD(descriptor, mode)  # a leftover temporary file keeps its old mode through O_CREAT
            data = text.encode("utf-8")
            written = 0
            while written < len(data):
                written += os.write(descriptor, data[written:])
        finally:
            os.close(descriptor)
        if parent is not None:
            os.replace(temporary, names[-1], src_dir_fd=parent, dst_dir_fd=parent)
        else:
            os.replace(target, path)
    return path


def write_private_text(root: Path, path: Path, text: str) -> Path:
    """`write_text` for a file only its owner may read (it may hold a credential), in an owner-only folder."""
    return write_text(root, path, text, PRIVATE_FILE_MODE, PRIVATE_DIR_MODE)


def make_folder(root: Path, path: Path, mode: int = DIR_MODE) -> Path:
    """Create `path` below `root` and the folders above it, refusing any that is a link."""
    with _folder(root, parts_below(root, path), True, mode):
        return path


def checked(root: Path, path: Path) -> Path:
    """`path`, refused when it, or a folder between `root` and it, is a link (a missing path passes)."""
    names = parts_below(root, path)
    for depth in range(1, len(names) + 1):
        step = root.joinpath(*names[:depth])
        if is_link(step):
            raise LinkRefusedError(step, root)
        if not step.exists():
            break
    return path


def resolves_inside(root: Path, relative: str) -> bool:
    """Whether the project file `relative` names stays inside `root` once every link is followed.

    The rule for the project's own files (context files, allowed paths…), where a link that stays
    inside is the project's business; `.ralph/` files take no link at all.
    """
    base = root.resolve()
    try:
        resolved = (base / relative).resolve()
    except (OSError, RuntimeError, ValueError):  # a link loop, a NUL, a path the OS cannot resolve
        return False
    return resolved.is_relative_to(base)


def links_below(folder: Path, skip: frozenset[str] = frozenset()) -> list[Path]:
    """Every link at or below `folder`, sorted; of a folder named in `skip`, only its own entries."""
    if is_link(folder):
        return [folder]
    found: list[Path] = []
    for current, folders, files in os.walk(folder, followlinks=False):
        here = Path(current)
        for name in (*folders, *files):
            if is_link(here / name):
                found.append(here / name)
        for name in folders:
            if name in skip and not is_link(here / name):
                found += _links_in(here / name)
        folders[:] = [name for name in folders if name not in skip and not is_link(here / name)]
    return sorted(found)


def _links_in(folder: Path) -> list[Path]:
    try:
        return [entry for entry in folder.iterdir() if is_link(entry)]
    except OSError:  # unreadable: as os.walk, skip what cannot be listed
        return []


def _is_link_at(path: Path, name: str, parent: int | None) -> bool:
    try:
        found = os.lstat(name, dir_fd=parent) if parent is not None else os.lstat(path)
    except FileNotFoundError:
        return False
    return stat.S_ISLNK(found.st_mode)
