"""The pygments private name the diff highlighter relies on is still there, and still the tokens' class."""

from __future__ import annotations

from pygments.token import Keyword, Token

from ralph_desk.gui.pygments_compat import TokenType


def test_pygments_tokens_are_still_of_its_private_token_class() -> None:
    assert isinstance(Token, TokenType) and isinstance(Keyword.Constant, TokenType)
    assert Keyword.Constant in Keyword  # the family test `_family` walks up with
