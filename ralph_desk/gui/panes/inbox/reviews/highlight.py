"""Syntax colours for diff lines: Pygments lexes one line at a time, only the lines a view paints."""

from __future__ import annotations

from functools import lru_cache

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_for_filename
from pygments.token import Comment, Keyword, Name, Number, Operator, String, Token
from pygments.util import ClassNotFound
from PySide6.QtGui import QColor

from ralph_desk.gui import theme
from ralph_desk.gui.pygments_compat import TokenType

TAB = "    "
CACHED_LINES = 4096
LONGEST_LEXED = 1000  # characters: a longer line (minified code, data) is shown plain, and lexed never
SHOWN_CHARS = 2000  # characters of a line drawn at most; the rest is past any screen's edge

# (light, dark) per token family; a token takes the colour of its nearest listed ancestor.
TOKEN_COLORS: dict[TokenType, tuple[str, str]] = {
    Keyword: ("#a626a4", "#d19ef5"),
    Name.Builtin: ("#0f766e", "#3dd6c3"),
    Name.Function: ("#2f5fb8", "#7cacf8"),
    Name.Class: ("#b45309", "#f2b866"),
    Name.Decorator: ("#b45309", "#f2b866"),
    Name.Tag: ("#be185d", "#f472b6"),
    Name.Attribute: ("#a16207", "#e6c07b"),
    String: ("#15803d", "#7fd08e"),
    Number: ("#c2410c", "#fb9a5a"),
    Comment: ("#6b7280", "#8b949e"),
    Operator.Word: ("#a626a4", "#d19ef5"),
}

Span = tuple[str, QColor | None]


@lru_cache(maxsize=256)
def lexer_for(path: str) -> Lexer | None:
    """The Pygments lexer for a file name (None when none fits: the text stays plain)."""
    try:
        return get_lexer_for_filename(path, stripnl=False, ensurenl=False, stripall=False)
    except ClassNotFound:
        return None


def _family(token: TokenType) -> TokenType | None:
    while token is not Token and token is not None:
        if token in TOKEN_COLORS:
            return token
        token = token.parent
    return None


@lru_cache(maxsize=512)
def _color(token: TokenType, dark: bool) -> QColor | None:
    family = _family(token)
    return QColor(TOKEN_COLORS[family][1 if dark else 0]) if family is not None else None


@lru_cache(maxsize=CACHED_LINES)
def _spans(path: str, text: str, dark: bool) -> tuple[Span, ...]:
    lexer = lexer_for(path)
    if lexer is None:
        return ((text, None),)
    spans: list[Span] = []
    for token, value in lexer.get_tokens(text):
        if not value:
            continue
        color = _color(token, dark)
        if spans and spans[-1][1] == color:
            spans[-1] = (spans[-1][0] + value, color)
        else:
            spans.append((value, color))
    return tuple(spans)


def spans(path: str, text: str) -> tuple[Span, ...]:
    """A line's text (tabs expanded) cut into runs of one colour (None: the view's text colour)."""
    shown = text[:SHOWN_CHARS].replace("\t", TAB)
    if len(text) > LONGEST_LEXED:
        return ((shown, None),)
    return _spans(path, shown, theme.current_scheme() is theme.Scheme.DARK)
