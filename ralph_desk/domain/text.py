"""Whether a text can be stored and read back as UTF-8, and where in a nested value it cannot (no I/O)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

STORABLE_WORDING = "text that can be stored as UTF-8 (no lone surrogates such as U+D800, no NUL characters)"


def unstorable(value: str) -> str | None:
    """Why `value` cannot be stored and read back as UTF-8 (`a NUL character at character 3`), or None."""
    if "\x00" in value:
        return f"a NUL character at character {value.index(chr(0)) + 1}"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        code = ord(value[error.start])
        byte = f" (the byte 0x{code - 0xDC00:02X}, which is not UTF-8)" if 0xDC80 <= code <= 0xDCFF else ""
        return f"a lone surrogate U+{code:04X}{byte} at character {error.start + 1}"
    return None


def has_lone_surrogate(value: str) -> bool:
    """Whether `value` holds a code point UTF-8 cannot encode (a lone surrogate)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def where(parts: tuple[int | str, ...], root: str = "") -> str:
    """`('userStories', 2, 'title')` as `userStories[2].title` (under `root` when given)."""
    shown = root
    for part in parts:
        shown += f"[{part}]" if isinstance(part, int) else (f".{part}" if shown else str(part))
    return shown or "(top level)"


def _strings(value: object, path: tuple[int | str, ...]) -> Iterator[tuple[tuple[int | str, ...], str]]:
    """Every text in a JSON-like value (keys included, at their own place), with its place."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str):
                yield path, key
            yield from _strings(item, (*path, str(key)))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _strings(item, (*path, index))


def first_surrogate(value: object, root: str = "") -> str | None:
    """The place (`params.arguments.title`) of the first text in `value` that holds a lone surrogate."""
    for path, text in _strings(value, ()):
        if has_lone_surrogate(text):
            return where(path, root)
    return None
