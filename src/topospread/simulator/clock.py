"""The simulated clock of ``simulate``: durations as Go writes them.

The clock counts nanoseconds since the timeline's start (an int, so sums stay exact); a
``wait`` step moves it on. Taints record ``timeAdded`` and objects ``creationTimestamp`` as
timestamps: the clock's 0 is the ``epoch``, nanoseconds since the Unix epoch
(simulator/taint_eviction_controller.py's ``clock_epoch`` picks it; timestamps are read and
written by controllers/common.py's ``parse_time`` and ``format_time``).
"""

from __future__ import annotations

from typing import Final

from topospread.api.go_duration import SECOND, DurationError, format_duration, parse_duration

# The last time a timestamp can record, 9999-12-31T23:59:59.999999999Z: metav1.Time writes
# RFC 3339, whose year has four digits (time.Parse reads "2006" as four), so an object stamped
# later could not be read back. The clock stops short of it.
LAST_STAMP: Final = 253_402_300_800 * SECOND - 1


def seconds(nanos: int) -> int | float:
    """The clock in seconds, as JSON shows it: whole seconds as an int."""
    whole, fraction = divmod(nanos, SECOND)
    return whole if not fraction else nanos / SECOND


__all__ = [
    "LAST_STAMP",
    "SECOND",
    "DurationError",
    "format_duration",
    "parse_duration",
    "seconds",
]
