"""Cron schedules as the CronJob controller reads ``spec.schedule``: five fields (minute, hour,
day of month, month, day of week) with ``*``, ``?``, lists, ranges, steps and month and
weekday names, or a descriptor (``@hourly``, ``@daily``, ``@every 90m``, ...), and the next
time a schedule fires after a given time, in ``spec.timeZone`` (UTC when unset).

The day of month and the day of week combine as robfig/cron combines them: when either is
``*`` (or ``?``) both must match, otherwise either may. Wall times skipped or repeated by a
daylight saving change resolve as Python's zoneinfo resolves them (the earlier offset), which
may differ from Go's by the length of the change.

Upstream: github.com/robfig/cron/v3 (parser.go ParseStandard, spec.go Next, constantdelay.go),
as pkg/controller/cronjob uses it (v1.35)
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from topospread.api.go_duration import SECOND, DurationError, parse_duration

_STAR: Final = 1 << 63  # the field was * or ? (robfig's starBit)

_MONTHS: Final = (
    *("jan", "feb", "mar", "apr", "may", "jun"),
    *("jul", "aug", "sep", "oct", "nov", "dec"),
)
_DAYS: Final = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
# (minimum, maximum, names) per field, in order.
_BOUNDS: Final[tuple[tuple[int, int, dict[str, int]], ...]] = (
    (0, 59, {}),
    (0, 23, {}),
    (1, 31, {}),
    (1, 12, {name: i + 1 for i, name in enumerate(_MONTHS)}),
    (0, 6, {name: i for i, name in enumerate(_DAYS)}),
)
_DESCRIPTORS: Final = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
# robfig gives up after five years without a match (Feb 30th).
_YEARS_AHEAD: Final = 5


class CronError(ValueError):
    """A schedule robfig/cron's standard parser rejects; the message is its."""


@dataclass(frozen=True, slots=True)
class Schedule:
    """A parsed schedule: a bit set per field, or a constant delay (``@every``)."""

    fields: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)
    every: int = 0  # nanoseconds, whole seconds; 0 for a field schedule


def parse_schedule(text: str) -> Schedule:
    """Upstream: cron.ParseStandard (robfig/cron/v3 parser.go)"""
    spec = text.strip()
    if not spec:
        raise CronError("empty spec string")
    if spec.startswith(("TZ=", "CRON_TZ=")):
        # The API server refuses these since v1.27: spec.timeZone says it instead.
        raise CronError("cannot use TZ or CRON_TZ in schedule, use timeZone field instead")
    if spec.startswith("@every "):
        try:
            delay = parse_duration(spec[len("@every ") :].strip())
        except DurationError as err:
            raise CronError(f"failed to parse duration {spec}: {err}") from err
        delay = max(delay, SECOND)
        return Schedule(every=delay - delay % SECOND)
    if spec.startswith("@"):
        if spec not in _DESCRIPTORS:
            raise CronError(f"unrecognized descriptor: {spec}")
        spec = _DESCRIPTORS[spec]
    parts = spec.split()
    if len(parts) != 5:
        # Go's %s of a []string: [* * *]
        raise CronError(f"expected exactly 5 fields, found {len(parts)}: [{' '.join(parts)}]")
    bits = tuple(_field(part, *bounds) for part, bounds in zip(parts, _BOUNDS, strict=True))
    return Schedule(fields=(bits[0], bits[1], bits[2], bits[3], bits[4]))


def _field(text: str, low: int, high: int, names: dict[str, int]) -> int:
    bits = 0
    for expr in text.split(","):
        bits |= _range(expr, low, high, names)
    return bits


def _range(expr: str, low: int, high: int, names: dict[str, int]) -> int:
    """Upstream: getRange (parser.go)"""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    extra = 0
    if low_and_high[0] in ("*", "?"):
        start, end, extra = low, high, _STAR
    else:
        start = _number(low_and_high[0], names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _number(low_and_high[1], names)
        else:
            raise CronError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _number(range_and_step[1], {})
        if len(low_and_high) == 1:  # "N/step" runs from N to the maximum
            end = high
        if step > 1:
            extra = 0
    else:
        raise CronError(f"too many slashes: {expr}")
    if start < low:
        raise CronError(f"beginning of range ({start}) below minimum ({low}): {expr}")
    if end > high:
        raise CronError(f"end of range ({end}) above maximum ({high}): {expr}")
    if start > end:
        raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise CronError(f"step of range should be a positive number: {expr}")
    bits = 0
    for i in range(start, end + 1, step):
        bits |= 1 << i
    return bits | extra


def _number(text: str, names: dict[str, int]) -> int:
    if text.lower() in names:
        return names[text.lower()]
    if not text.isdigit():
        raise CronError(f"failed to parse int from {text}: strconv.Atoi: parsing {text!r}")
    return int(text)


def location(time_zone: str | None) -> dt.tzinfo:
    """``spec.timeZone`` as a zone (UTC when unset); a CronError when no such zone exists."""
    if not time_zone:
        return dt.UTC
    try:
        return ZoneInfo(time_zone)
    except (ZoneInfoNotFoundError, ValueError) as err:
        raise CronError(f"unknown time zone {time_zone}") from err


# 10000-01-01T00:00:00Z in nanoseconds since the Unix epoch.
_YEAR_10000: Final = 253_402_300_800 * SECOND


def next_time(schedule: Schedule, after: int, tz: dt.tzinfo = dt.UTC) -> int | None:
    """The first time (nanoseconds since the Unix epoch, whole seconds) strictly after
    ``after`` at which the schedule fires; None when none does within five years, or before
    the year 10000 (no timestamp records a later time: simulator/clock.py's LAST_STAMP).

    Upstream: SpecSchedule.Next and ConstantDelaySchedule.Next (robfig/cron/v3)
    """
    at: int | None
    if schedule.every:
        at = after - after % SECOND + schedule.every
    else:
        try:
            at = _next_in_calendar(schedule, after, tz)
        except (OverflowError, ValueError):  # past 9999-12-31, where datetime ends
            at = None
    return at if at is not None and at < _YEAR_10000 else None


def _next_in_calendar(schedule: Schedule, after: int, tz: dt.tzinfo) -> int | None:
    minute, hour, dom, month, dow = schedule.fields
    seconds = after // SECOND + 1
    t = dt.datetime.fromtimestamp(seconds, tz).replace(tzinfo=None)
    if t.second:
        t = t.replace(second=0) + dt.timedelta(minutes=1)
    limit = t.year + _YEARS_AHEAD
    while t.year <= limit:
        if not (1 << t.month) & month:
            t = (t.replace(day=1) + dt.timedelta(days=32)).replace(day=1, hour=0, minute=0)
            continue
        if not _day_matches(dom, dow, t):
            t = t.replace(hour=0, minute=0) + dt.timedelta(days=1)
            continue
        if not (1 << t.hour) & hour:
            t = t.replace(minute=0) + dt.timedelta(hours=1)
            continue
        if not (1 << t.minute) & minute:
            t += dt.timedelta(minutes=1)
            continue
        return int(t.replace(tzinfo=tz).timestamp()) * SECOND
    return None


def _day_matches(dom: int, dow: int, t: dt.datetime) -> bool:
    """Upstream: dayMatches (spec.go)"""
    dom_match = bool((1 << t.day) & dom)
    dow_match = bool((1 << (t.isoweekday() % 7)) & dow)
    if dom & _STAR or dow & _STAR:
        return dom_match and dow_match
    return dom_match or dow_match


__all__ = ["CronError", "Schedule", "location", "next_time", "parse_schedule"]
