"""The simulated clock of ``simulate``: durations as Go writes them.

The clock counts nanoseconds since the timeline's start (an int, so sums stay exact); a
``wait`` step moves it on. Taints record ``timeAdded`` and objects ``creationTimestamp`` as
timestamps: the clock's 0 is the ``epoch``, nanoseconds since the Unix epoch
(simulator/taint_eviction_controller.py's ``clock_epoch`` picks it; timestamps are read and
written by controllers/common.py's ``parse_time`` and ``format_time``).
"""

from __future__ import annotations

from topospread.api.go_duration import SECOND, DurationError, format_duration, parse_duration


def seconds(nanos: int) -> int | float:
    """The clock in seconds, as JSON shows it: whole seconds as an int."""
    whole, fraction = divmod(nanos, SECOND)
    return whole if not fraction else nanos / SECOND


__all__ = [
    "SECOND",
    "DurationError",
    "format_duration",
    "parse_duration",
    "seconds",
]
