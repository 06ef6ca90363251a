"""`None` as a model override may return it to Qt, without the reference PySide6 6.12 takes from it.

PySide6 6.12 drops one reference to `None` each time Qt converts a `None` returned by a Python
override (`data`, `headerData`) into an invalid QVariant. Before CPython 3.12 `None` is not immortal:
after some thousand repaints its count reaches zero and the process aborts ("none_dealloc"). `none()`
hands back the reference first; an extra count on `None` is harmless where nothing is taken.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt

# Immortal objects (CPython 3.12+) ignore reference counts, so nothing needs handing back there.
_MORTAL_NONE = sys.version_info < (3, 12)
_inc_ref = ctypes.pythonapi.Py_IncRef
_inc_ref.argtypes = [ctypes.py_object]
_inc_ref.restype = None


def none() -> None:
    """`None` for Qt, with one reference added for the one the conversion takes away."""
    if _MORTAL_NONE:
        _inc_ref(None)


def for_qt(value: Any) -> Any:
    """`value`, or `none()` when it is None."""
    if value is None:
        none()
    return value


class NoneSafeModel:
    """A mixin for item models: `data` and `headerData` never cost `None` a reference."""

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """The model's value, safe to hand to Qt."""
        return for_qt(super().data(index, role))  # type: ignore[misc]

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """The model's header value, safe to hand to Qt."""
        return for_qt(super().headerData(section, orientation, role))  # type: ignore[misc]
