"""Natural order for names people number: ``a-1, a-2, a-10, a-100`` rather than the code-point
order ``a-1, a-10, a-100, a-2``."""

from __future__ import annotations

import re
from typing import Final

_DIGITS: Final = re.compile(r"(\d+)")


def natural_key(name: str) -> tuple[tuple[str | int, ...], str]:
    """A sort key ordering runs of digits by their value and the rest by code point.

    ``re.split`` with a group alternates text and digits, starting with text (perhaps empty),
    so two keys compare text with text and numbers with numbers at every position. The name
    itself breaks ties (``a-01`` and ``a-1``), so the order stays total and deterministic.
    """
    parts = _DIGITS.split(name)
    return tuple(int(p) if i % 2 else p for i, p in enumerate(parts)), name


__all__ = ["natural_key"]
