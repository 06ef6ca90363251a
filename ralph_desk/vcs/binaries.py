"""Which files of a diff are binary, decided from their bytes: a NUL in the first 8,000 (git's own rule).

Git also calls a file binary when an attribute (`-diff`, from `.git/info/attributes` or a checked-out
`.gitattributes`, which no setting switches off in git 2.39) or a driver says so, so a text file an agent
wrote could show only as `Binary files … differ`. The desk checks the blobs of every file a diff marks
binary, and the sections whose blobs hold text are shown again as text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ralph_desk.domain.diffs import parse_diff
from ralph_desk.vcs.places import Where
from ralph_desk.vcs.run import read_bytes

FIRST_FEW_BYTES = 8000  # git's buffer_is_binary() looks this far
LARGEST_READ = 512 * 1024 * 1024  # past lockdown's core.bigFileThreshold git never shows a text diff either
BINARY_MARK = "Binary files "

_SECTION_START = re.compile(r"^(?=diff --git )", re.M)
_INDEX = re.compile(r"index ([0-9a-f]{40}|[0-9a-f]{64})\.\.([0-9a-f]{40}|[0-9a-f]{64})(?: [0-7]+)?")
_NULL = re.compile(r"0{40}|0{64}")


def sections(diff: str) -> list[str]:
    """`diff` cut before each `diff --git` line: one piece per file shown (joined, they give `diff` back)."""
    return [piece for piece in _SECTION_START.split(diff) if piece]


def marked_blobs(section: str) -> tuple[str, ...] | None:
    """The blob ids (no null id) of a section git marked `Binary files … differ`; None when not marked."""
    lines = section.split("\n")
    # Only git writes a line starting so: every line of a file's content starts with ' ', '+', '-' or '\'.
    if not any(line.startswith(BINARY_MARK) and line.endswith(" differ") for line in lines):
        return None
    found = next((_INDEX.fullmatch(line) for line in lines if _INDEX.fullmatch(line)), None)
    if found is None:
        return None
    return tuple(oid for oid in found.groups() if not _NULL.fullmatch(oid))


def text_blobs(repo: Where, oids: Iterable[str]) -> set[str]:
    """Those of the blobs `oids` without a NUL byte in their first 8,000 bytes."""
    wanted = sorted(set(oids))
    if not wanted:
        return set()
    checked = read_bytes(
        repo, "cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)", stdin=_lines(wanted)
    )
    readable = [
        words[0].decode()
        for words in (line.split() for line in checked.splitlines())
        if len(words) == 3 and words[1] == b"blob" and int(words[2]) <= LARGEST_READ
    ]
    return {oid for oid, content in _contents(repo, readable) if b"\0" not in content[:FIRST_FEW_BYTES]}


def paths(section: str) -> tuple[str, ...]:
    """The paths (from the top of the repository) a section shows: its old and its new name."""
    shown = parse_diff(section)
    return tuple(dict.fromkeys(p for file in shown for p in (file.old_path, file.new_path) if p))


def key(section: str) -> tuple[str, str]:
    """What names a section in any diff of the same commits: its `diff --git` and `index` lines."""
    lines = section.split("\n")
    return lines[0], next((line for line in lines if _INDEX.fullmatch(line)), "")


def _contents(repo: Where, oids: Sequence[str]) -> list[tuple[str, bytes]]:
    """Each blob of `oids` with its bytes, read in one `git cat-file --batch`."""
    if not oids:
        return []
    output = read_bytes(repo, "cat-file", "--batch", stdin=_lines(oids))
    found: list[tuple[str, bytes]] = []
    at = 0
    while at < len(output):
        end = output.index(b"\n", at)
        words = output[at:end].split()
        if len(words) != 3:  # `<oid> missing`: nothing to read
            at = end + 1
            continue
        size = int(words[2])
        found.append((words[0].decode(), output[end + 1 : end + 1 + size]))
        at = end + 1 + size + 1
    return found


def _lines(oids: Sequence[str]) -> bytes:
    return "".join(f"{oid}\n" for oid in oids).encode()
