"""pygments names its token class privately (`_TokenType`): this is the one module that imports it."""

from __future__ import annotations

from pygments.token import _TokenType as TokenType

__all__ = ["TokenType"]
