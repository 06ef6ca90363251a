"""Hot reads: a select compiled once for the engine's dialect and run straight on a pooled DBAPI cursor.

Per execution, SQLAlchemy's Core (execution context, events, the compiled cache's lookup, result
metadata) costs a one-row read about four times what its statement costs; an agent's `get_task`
pays that on every call. A prepared read keeps what Core would do with the rows: each column's
own result processor (the dialect's datetime parsing, JSON decoding…) and the same DBAPI errors,
wrapped as SQLAlchemy wraps them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import Engine, Select
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DBAPIError

Processor = Callable[[Any], Any]


class PreparedRead:
    """One select, compiled once for one dialect; `rows` runs it on a connection of the engine's pool."""

    def __init__(self, statement: Select[Any], dialect: Dialect) -> None:
        self.dialect = dialect
        compiled = statement.compile(dialect=dialect)
        binds = list(compiled.binds.values())
        if any(bind.expanding for bind in binds):
            raise TypeError("a prepared read's SQL is fixed: no expanding (IN-list) parameters")
        for bind in binds:
            if bind.type.dialect_impl(dialect).bind_processor(dialect) is not None:
                raise TypeError(
                    f"parameter {bind.key!r} needs its type's processing: not for a prepared read"
                )
        # Placeholders for the values a call gives: what they stand for does not change the SQL, in
        # which the literal-execute parameters (an aggregate's separator…) are rendered once, here.
        given = {bind.key for bind in binds if bind.required}
        expanded = compiled.construct_expanded_state(dict.fromkeys(given))
        self.sql = expanded.statement
        self.defaults = {name: value for name, value in expanded.parameters.items() if name not in given}
        self.order = tuple(expanded.positiontup or ()) if compiled.positional else None
        self.processors: tuple[tuple[int, Processor], ...] = tuple(
            (index, processor)
            for index, column in enumerate(statement.selected_columns)
            if (processor := column.type.dialect_impl(dialect).result_processor(dialect, None)) is not None
        )

    def parameters(self, values: Mapping[str, Any]) -> Sequence[Any] | Mapping[str, Any]:
        """The values as the driver takes them: by name, or in the order of the SQL's placeholders."""
        merged = {**self.defaults, **values}
        return merged if self.order is None else tuple(merged[name] for name in self.order)

    def rows(self, engine: Engine, values: Mapping[str, Any]) -> list[list[Any]]:
        """The statement's rows, each column typed as Core would type it."""
        parameters = self.parameters(values)
        connection = engine.raw_connection()
        try:
            cursor = connection.cursor()
            try:
                cursor.execute(self.sql, parameters)
                found = cursor.fetchall()
            finally:
                cursor.close()
        except self.dialect.loaded_dbapi.Error as error:
            gone = self.dialect.is_disconnect(error, connection.dbapi_connection, None)
            if gone:
                connection.invalidate(error)  # the pool replaces it, as after a Core statement
            raise DBAPIError.instance(
                self.sql,
                parameters,
                error,
                self.dialect.loaded_dbapi.Error,
                connection_invalidated=gone,
                dialect=self.dialect,
            ) from error
        finally:
            connection.close()
        return [self._typed(row) for row in found]

    def _typed(self, row: Sequence[Any]) -> list[Any]:
        values = list(row)
        for index, processor in self.processors:
            values[index] = processor(values[index])
        return values
