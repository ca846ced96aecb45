"""Go's time.Duration as text: parsed as time.ParseDuration parses it, printed as
time.Duration.String prints it (``5m0s``, ``1.5s``, ``300ms``), in nanoseconds.

Kept below the framework so that a configuration's durations (leaderElection, plugin args) are
read and reported the way the simulator's clock reads and reports its own.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Final

SECOND: Final = 1_000_000_000

# Go's units (time.unitMap), µ as both MICRO SIGN and GREEK SMALL LETTER MU.
_UNITS: Final = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,
    "\u03bcs": 1_000,
    "ms": 1_000_000,
    "s": SECOND,
    "m": 60 * SECOND,
    "h": 3600 * SECOND,
}
_PART: Final = re.compile(r"(\d*)(?:\.(\d*))?([^\d.]*)")


class DurationError(ValueError):
    """Text that is no Go duration; the message is Go's."""


def parse_duration(text: str) -> int:
    """Nanoseconds of a duration such as ``90s``, ``5m``, ``1h30m`` or ``1.5h``.

    Upstream: time.ParseDuration (Go standard library)
    """
    quoted = f'"{text}"'
    s = text
    negative = s[:1] == "-"
    if s[:1] in ("-", "+"):
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise DurationError(f"time: invalid duration {quoted}")
    total = Decimal(0)
    while s:
        match = _PART.match(s)
        assert match is not None  # every group may be empty
        whole, fraction, unit = match.groups()
        if not whole and not fraction:  # no digits: "h", "."
            raise DurationError(f"time: invalid duration {quoted}")
        if not unit:
            raise DurationError(f"time: missing unit in duration {quoted}")
        if unit not in _UNITS:
            raise DurationError(f'time: unknown unit "{unit}" in duration {quoted}')
        total += Decimal(f"{whole or 0}.{fraction or 0}") * _UNITS[unit]
        s = s[match.end() :]
    if total >= 2**63:
        raise DurationError(f"time: invalid duration {quoted}")
    # Go truncates a fraction of a nanosecond.
    nanos = int(total)
    return -nanos if negative else nanos


def format_duration(nanos: int) -> str:
    """``5m0s``, ``1h30m0s``, ``1.5s``, ``300ms``: a duration as Go prints it.

    Upstream: time.Duration.String (Go standard library)
    """
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    u = abs(nanos)
    if u < SECOND:
        for unit, size in (("ms", 1_000_000), ("\u00b5s", 1_000), ("ns", 1)):
            if u >= size:
                return f"{sign}{_decimal(u, size)}{unit}"
    hours, rest = divmod(u, 3600 * SECOND)
    minutes, rest = divmod(rest, 60 * SECOND)
    out = f"{_decimal(rest, SECOND)}s"
    if hours or minutes:
        out = f"{minutes}m{out}"
    if hours:
        out = f"{hours}h{out}"
    return sign + out


def _decimal(value: int, size: int) -> str:
    whole, fraction = divmod(value, size)
    if not fraction:
        return str(whole)
    digits = str(fraction).rjust(len(str(size)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}"


__all__ = ["SECOND", "DurationError", "format_duration", "parse_duration"]
