"""TOML values written by hand: basic strings, arrays and inline tables of strings (no I/O)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ralph_desk.domain.text import unstorable


def toml_string(text: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped, other Unicode as is.

    Characters beyond the BMP stay themselves (TOML's `\\uXXXX` takes no surrogate halves, so JSON's
    escaping is not TOML); text UTF-8 cannot hold (a path of bytes that are not UTF-8) is refused.
    """
    if "\x00" not in text and (why := unstorable(text)) is not None:
        raise ValueError(f"{text!a} cannot be written in a TOML file: it holds {why}")
    out = ['"']
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def toml_array(items: Iterable[str]) -> str:
    """A TOML array of strings."""
    return "[" + ", ".join(toml_string(item) for item in items) + "]"


def toml_table(entries: Mapping[str, str]) -> str:
    """A TOML inline table of strings, every key quoted."""
    return (
        "{" + ", ".join(f"{toml_string(key)} = {toml_string(value)}" for key, value in entries.items()) + "}"
    )
