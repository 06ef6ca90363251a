"""An agent's output read line by line, however long a line is: past `MAX_LINE` bytes it is cut, with a note.

asyncio's own line reading raises once a line outgrows the reader's limit, which ended the session's
reading while the agent ran on; here the head of such a line is kept and the rest read and dropped.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

MAX_LINE = 16 * 1024 * 1024  # also the reader's buffer limit: a line longer than this is cut


def cut_note(dropped: int) -> bytes:
    """What ends a cut line: how much of it was dropped."""
    return f" [ralph-desk: cut {dropped} more bytes; a line keeps at most {MAX_LINE} bytes]".encode()


async def lines_of(stream: asyncio.StreamReader) -> AsyncIterator[bytes]:
    """Each line of `stream` (without its line break), a line longer than the limit cut with a note."""
    while True:
        try:
            line = await stream.readuntil(b"\n")
        except asyncio.IncompleteReadError as end:
            if end.partial:
                yield end.partial
            return
        except asyncio.LimitOverrunError as over:
            head = await stream.read(over.consumed)
            yield head[:MAX_LINE] + cut_note(max(0, len(head) - MAX_LINE) + await _skip_rest(stream))
            continue
        yield line[:-1]


async def _skip_rest(stream: asyncio.StreamReader) -> int:
    """Read and drop the rest of a line; how many bytes that was (its line break not counted)."""
    dropped = 0
    while True:
        try:
            return dropped + len(await stream.readuntil(b"\n")) - 1
        except asyncio.IncompleteReadError as end:
            return dropped + len(end.partial)
        except asyncio.LimitOverrunError as over:
            dropped += len(await stream.read(over.consumed))
