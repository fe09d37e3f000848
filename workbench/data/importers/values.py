"""Strict checks of the numbers and flags an importer reads.

Every value lands in the episode's int32 / bool / float64 arrays exactly as the file meant it,
or the item is refused naming it.

NaN, infinities, fractions where a count is meant, negative counts, values past int32 and
booleans written as strings (``"false"`` is truthy in Python) are all refused: casting them
would import a silently different episode.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from workbench.data.importers.batch import BadInput

#: The largest value an episode's int32 arrays hold.
INT32_MAX = 2**31 - 1
INT32_MIN = -(2**31)
_DIGITS = re.compile(r"-?[0-9]{1,12}")  # ASCII digits only: int() would also read "９"


def integer(value: Any, where: str, name: str, *, low: int = 0, high: int = INT32_MAX) -> int:
    """``value`` as an int in ``low..high``: an int (not a bool), or a float with no fraction.

    Raises ``BadInput`` naming ``where`` and ``name`` for anything else (NaN, inf, 8.7, "3", ...).
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise BadInput(where, f"{name}: {_show(value)} is not an integer")
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value) or value != int(value):
            raise BadInput(where, f"{name}: {_show(value)} is not an integer")
    number = int(value)
    if not low <= number <= high:
        raise BadInput(where, f"{name}: {_show(value)} is outside {low}..{high}")
    return number


def integer_text(text: str, where: str, name: str, *, low: int = 0, high: int = INT32_MAX) -> int:
    """A decimal integer written in text (``"7"``, ``"-1"``), checked as ``integer`` does."""
    if not _DIGITS.fullmatch(text.strip()):
        raise BadInput(where, f"{name}: {text.strip()[:40]!r} is not an integer in {low}..{high}")
    return integer(int(text), where, name, low=low, high=high)


def flag(value: Any, where: str, name: str) -> bool:
    """``value`` as a bool: true/false, or the integers 0 and 1. Raises ``BadInput`` otherwise
    (``"false"``, ``0.5``, null...)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)) and value in (0, 1):
        return bool(value)
    raise BadInput(where, f"{name}: {_show(value)} is not true or false")


def finite(value: Any, where: str, name: str) -> float:
    """``value`` as a finite float (an int or float, not a bool or string)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise BadInput(where, f"{name}: {_show(value)} is not a number")
    try:
        number = float(value)
    except OverflowError:
        raise BadInput(where, f"{name}: {_show(value)} is too large") from None
    if not math.isfinite(number):
        raise BadInput(where, f"{name}: {_show(value)} is not a finite number")
    return number


def check_array(array: np.ndarray, where: str, *, kind: str, low: int = 0, high: int = INT32_MAX) -> np.ndarray:
    """A file's array checked for what it should hold: ``kind`` is ``"count"`` (integers in
    ``low..high``, returned as int64), ``"flag"`` (bools or 0/1) or ``"real"`` (finite floats).
    Raises ``BadInput`` naming ``where`` and the first bad element."""
    array = np.asarray(array)
    if kind == "flag":
        if array.dtype == bool:
            return array
        if np.issubdtype(array.dtype, np.number):
            bad = np.flatnonzero(~np.isin(array.ravel(), (0, 1)))
            if not bad.size:
                return array.astype(bool)
            raise BadInput(where, f"element {int(bad[0])} is {array.ravel()[bad[0]]!r}, not true or false")
        raise BadInput(where, f"has dtype {array.dtype}, expected booleans")
    if not (np.issubdtype(array.dtype, np.number) and not np.issubdtype(array.dtype, np.complexfloating)):
        raise BadInput(where, f"has dtype {array.dtype}, expected numbers")
    values = array.astype(np.float64).ravel()
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise BadInput(where, f"element {int(bad[0])} is {values[bad[0]]!r}, not a finite number")
    if kind == "real":
        return array.astype(np.float64)
    if np.issubdtype(array.dtype, np.floating):
        bad = np.flatnonzero(values != np.round(values))
        if bad.size:
            raise BadInput(where, f"element {int(bad[0])} is {values[bad[0]]!r}, not an integer")
    bad = np.flatnonzero((values < low) | (values > high))
    if bad.size:
        raise BadInput(where, f"element {int(bad[0])} is {values[bad[0]]:g}, outside {low}..{high}")
    return array.astype(np.int64)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
