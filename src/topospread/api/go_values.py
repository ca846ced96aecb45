"""The errors of the Go parsers the API server's decoder runs on some strings, in Go's words.

A metav1.Time is ``time.Parse(time.RFC3339, s)``, a metav1.MicroTime the same with
``2006-01-02T15:04:05.000000Z07:00``, a metav1.Duration ``time.ParseDuration(s)`` and a
``[]byte`` field base64 (``StdEncoding``); each refuses a string with its own error, which the
server returns as it is (``parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot
parse "yesterday" as "2006"``). The strict decode checks these strings with the patterns below
(conservative: a string they refuse is judged here, exactly, before anything is said).

Upstream: time.Parse, time.ParseDuration and time.ParseError.Error (Go 1.25 time/format.go),
base64.Encoding.Decode (encoding/base64), Time/MicroTime/Duration.UnmarshalJSON
(k8s.io/apimachinery meta/v1, v1.35).
"""

from __future__ import annotations

import re
from typing import Final

RFC3339: Final = "2006-01-02T15:04:05Z07:00"
RFC3339_MICRO: Final = "2006-01-02T15:04:05.000000Z07:00"

_LEAP_YEAR: Final = r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)"
_MONTH_DAY: Final = (
    r"(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
    r"|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))"
)
_DATE: Final = rf"(?:[0-9]{{4}}-{_MONTH_DAY}|{_LEAP_YEAR}-02-29)"
_CLOCK: Final = r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
_ZONE: Final = r"(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
# What time.Parse surely accepts (a string they refuse is judged by go_time_error).
TIME_PATTERN: Final = rf"^{_DATE}T{_CLOCK}(?:\.[0-9]+)?{_ZONE}\Z"
MICRO_TIME_PATTERN: Final = rf"^{_DATE}T{_CLOCK}\.[0-9]{{6}}{_ZONE}\Z"
DURATION_PATTERN: Final = r"^[-+]?(?:0|(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|ms|s|m|h))+)\Z"
# A resource.Quantity's string that ParseQuantity surely takes (anything else: parse_quantity).
QUANTITY_PATTERN: Final = (
    r"^[+-]?[0-9]{1,18}(?:\.[0-9]{1,9})?(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9])?\Z"
)
BASE64_PATTERN: Final = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?\Z"

_TIME_RE: Final = re.compile(TIME_PATTERN)


def go_quote(text: str | bytes) -> str:
    """A string as the time package quotes it: ``"..."``, other bytes than printable ASCII as
    ``\\xNN``."""
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    out = ['"']
    for byte in raw:
        if byte >= 0x80 or byte < 0x20:
            out.append(f"\\x{byte:02x}")
        else:
            out.append(("\\" if byte in b'"\\' else "") + chr(byte))
    out.append('"')
    return "".join(out)


class _Bad(Exception):
    """A chunk of the layout the value does not match."""


def _digit(s: bytes, i: int) -> bool:
    return i < len(s) and 0x30 <= s[i] <= 0x39


def _getnum(s: bytes, fixed: bool) -> tuple[int, bytes]:
    if not _digit(s, 0):
        raise _Bad
    if not _digit(s, 1):
        if fixed:
            raise _Bad
        return s[0] - 0x30, s[1:]
    return (s[0] - 0x30) * 10 + s[1] - 0x30, s[2:]


def _atoi(s: bytes) -> int:
    sign = 1
    if s[:1] in (b"-", b"+"):
        sign, s = (-1 if s[:1] == b"-" else 1), s[1:]
    if not s or not s.isdigit() or not all(0x30 <= b <= 0x39 for b in s):
        raise _Bad
    return sign * int(s)


def _days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _nanoseconds(value: bytes, nbytes: int) -> str:
    """The range error of a fraction (``.123``), or "" when it is fine; _Bad when malformed."""
    if value[:1] not in (b".", b","):
        raise _Bad
    return "fractional second" if _atoi(value[1 : min(nbytes, 10)]) < 0 else ""


# The layouts as (literal prefix, element) pairs, as Go's nextStdChunk splits them.
_RFC3339_CLOCK: Final = (("", "2006"), ("-", "01"), ("-", "02"), ("T", "15"), (":", "04"))
_CHUNKS: Final = {
    RFC3339: (*_RFC3339_CLOCK, (":", "05"), ("", "Z07:00")),
    RFC3339_MICRO: (*_RFC3339_CLOCK, (":", "05"), ("", ".000000"), ("", "Z07:00")),
}


def go_time_error(text: str, layout: str = RFC3339) -> str | None:
    """time.Parse's error for ``text`` in ``layout`` (RFC3339 or RFC3339Micro), None if it
    parses."""
    if layout == RFC3339 and _TIME_RE.match(text):
        return None
    value = text.encode("utf-8", "surrogatepass")
    head = f"parsing time {go_quote(value)}"
    year = month = day = 0
    chunks = _CHUNKS[layout]
    for index, (prefix, std) in enumerate(chunks):
        literal = prefix.encode()
        if not value.startswith(literal):
            at = next(i for i, b in enumerate(literal) if i >= len(value) or value[i] != b)
            return f'{head} as "{layout}": cannot parse {go_quote(value[at:])} as "{prefix}"'
        value = value[len(literal) :]
        hold, out_of_range = value, ""
        try:
            if std == "2006":
                if len(value) < 4 or not _digit(value, 0):
                    raise _Bad
                year, value = _atoi(value[:4]), value[4:]
            elif std in ("01", "02"):
                number, value = _getnum(value, True)
                if std == "01":
                    month = number
                    out_of_range = "month" if not 0 < month <= 12 else ""
                else:
                    day = number
            elif std in ("15", "04", "05"):
                number, value = _getnum(value, std != "15")
                limit, name = {"15": (24, "hour"), "04": (60, "minute"), "05": (60, "second")}[std]
                out_of_range = name if number >= limit else ""
                next_std = chunks[index + 1][1] if index + 1 < len(chunks) else ""
                fraction = len(value) >= 2 and value[:1] in (b".", b",") and _digit(value, 1)
                if std == "05" and not out_of_range and fraction and next_std != ".000000":
                    n = 2
                    while _digit(value, n):
                        n += 1
                    out_of_range, value = _nanoseconds(value, n), value[n:]
            elif std == ".000000":
                if len(value) < 7:
                    raise _Bad
                out_of_range, value = _nanoseconds(value, 7), value[7:]
            else:  # Z07:00
                value, out_of_range = _zone(value)
        except _Bad:
            if out_of_range:
                return f"{head}: {out_of_range} out of range"
            return f'{head} as "{layout}": cannot parse {go_quote(hold)} as "{std}"'
        if out_of_range:
            return f"{head}: {out_of_range} out of range"
    if value:
        return f"{head}: extra text: {go_quote(value)}"
    if not 1 <= day <= _days_in(month, year):
        return f"{head}: day out of range"
    return None


def _zone(value: bytes) -> tuple[bytes, str]:
    """The zone read (``Z`` or ``+07:00``): the rest and a range error; _Bad when malformed
    (after the range error, which Go checks first)."""
    if value[:1] == b"Z":
        return value[1:], ""
    if len(value) < 6 or value[3:4] != b":":
        raise _Bad
    sign, hour, minute, value = value[:1], value[1:3], value[4:6], value[6:]
    hr = mm = 0
    bad = False
    try:
        hr = _getnum(hour, True)[0]
        mm = _getnum(minute, True)[0]
    except _Bad:
        bad = True
    out_of_range = "time zone offset minute" if mm > 60 else ""
    if hr > 24 and not out_of_range:
        out_of_range = "time zone offset hour"
    if out_of_range:
        return value, out_of_range
    if bad or sign not in (b"+", b"-"):
        raise _Bad
    return value, ""


_UNITS: Final = frozenset({"ns", "us", "µs", "μs", "ms", "s", "m", "h"})
_MAX_DURATION: Final = 1 << 63


def go_duration_error(text: str) -> str | None:
    """time.ParseDuration's error for ``text``, None if it parses."""
    quoted = go_quote(text)
    invalid = f"time: invalid duration {quoted}"
    s = text
    if s[:1] in ("-", "+"):
        s = s[1:]
    if s == "0":
        return None
    if not s:
        return invalid
    total = 0
    unit_ns = {"ns": 1, "us": 10**3, "µs": 10**3, "μs": 10**3, "ms": 10**6, "s": 10**9}
    unit_ns |= {"m": 60 * 10**9, "h": 3600 * 10**9}
    while s:
        if not (s[0] == "." or "0" <= s[0] <= "9"):
            return invalid
        m = re.match(r"[0-9]*", s)
        whole, s = m.group(0) if m else "", s[len(m.group(0)) if m else 0 :]
        if whole and int(whole) > _MAX_DURATION:
            return invalid
        fraction = ""
        if s[:1] == ".":
            m = re.match(r"[0-9]*", s[1:])
            fraction = m.group(0) if m else ""
            s = s[1 + len(fraction) :]
        if not whole and not fraction:
            return invalid
        i = 0
        while i < len(s) and not (s[i] == "." or "0" <= s[i] <= "9"):
            i += 1
        if i == 0:
            return f"time: missing unit in duration {quoted}"
        unit, s = s[:i], s[i:]
        if unit not in _UNITS:
            return f"time: unknown unit {go_quote(unit)} in duration {quoted}"
        scale = unit_ns[unit]
        value = int(whole or "0") * scale
        if value > _MAX_DURATION:
            return invalid
        if fraction:
            value += int(int(fraction) * scale / 10 ** len(fraction))
        total += value
        if total > _MAX_DURATION:
            return invalid
    if total > _MAX_DURATION - 1 and text[:1] != "-":
        return invalid
    return None


_B64: Final = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def go_base64_error(text: str) -> str | None:
    """base64.StdEncoding.Decode's error for ``text`` (``illegal base64 data at input byte
    N``), None if it decodes; newlines are skipped, as Go skips them."""
    src = text.encode("utf-8", "surrogatepass")
    si = 0
    while True:
        j = 0
        while j < 4:
            if si == len(src):
                if j == 0:
                    return None
                return _corrupt(si - j)
            byte = src[si]
            si += 1
            if byte in _B64:
                j += 1
                continue
            if byte in b"\r\n":
                continue
            if byte != 0x3D or j < 2:  # not "=", or padding too early
                return _corrupt(si - 1)
            if j == 2:  # "==" expected: the first "=" read, newlines skipped
                while si < len(src) and src[si] in b"\r\n":
                    si += 1
                if si == len(src):
                    return _corrupt(len(src))
                if src[si] != 0x3D:
                    return _corrupt(si - 1)
                si += 1
            while si < len(src) and src[si] in b"\r\n":
                si += 1
            return None if si == len(src) else _corrupt(si)


def _corrupt(at: int) -> str:
    return f"illegal base64 data at input byte {at}"
