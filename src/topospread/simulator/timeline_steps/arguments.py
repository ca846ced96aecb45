"""Shape checks shared by the steps' parsers: each raises one ManifestError naming the step
(``where``) and the field."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from topospread.errors import ManifestError
from topospread.simulator.clock import DurationError, parse_duration

DURATION_EXAMPLES = "expected a duration such as 90s, 5m or 1h30m"


def mapping_arg(
    a: Any, where: str, *, required: Sequence[str], allowed: Sequence[str]
) -> Mapping[str, Any]:
    """A mapping with only ``allowed`` keys and every ``required`` one."""
    if not isinstance(a, Mapping):
        with_keys = f" with {', '.join(required)}" if required else ""
        raise ManifestError(f"{where}: expected a mapping{with_keys}")
    for key in a:
        if key not in allowed:
            raise ManifestError(f"{where}: {key}: unknown field; expected {', '.join(allowed)}")
    for key in required:
        if key not in a:
            raise ManifestError(f"{where}: {key}: Required value")
    return a


def string_arg(a: Mapping[str, Any], key: str, where: str, what: str) -> str | None:
    """``a[key]``, a non-empty string (``what`` it names), or None when absent."""
    if key not in a:
        return None
    value = a[key]
    if not isinstance(value, str) or not value:
        raise ManifestError(f"{where}: {key}: expected {what}")
    return value


def names_arg(a: Any, where: str) -> list[str]:
    """A name or a non-empty list of names."""
    names = [a] if isinstance(a, str) else a
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
        raise ManifestError(f"{where}: expected a name or a list of names")
    return list(names)


def count_arg(value: Any, where: str) -> int:
    """A whole number, 0 or more (YAML's booleans are not counts)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ManifestError(f"{where}: Invalid value: {value!r}: expected a count (0 or more)")
    return value


def duration_arg(a: Any, where: str, field: str) -> int:
    """A Go duration, not negative (the clock only moves on), in nanoseconds; errors name
    ``field``."""
    if not isinstance(a, str):
        raise ManifestError(
            f"{where}: {field}: Invalid value: {json.dumps(a)}: {DURATION_EXAMPLES}"
        )
    try:
        nanos = parse_duration(a)
    except DurationError as err:
        raise ManifestError(
            f'{where}: {field}: Invalid value: "{a}": {err}; {DURATION_EXAMPLES}'
        ) from err
    if nanos < 0:
        raise ManifestError(
            f'{where}: {field}: Invalid value: "{a}": must not be negative '
            "(the clock only moves on)"
        )
    return nanos


__all__ = ["count_arg", "duration_arg", "mapping_arg", "names_arg", "string_arg"]
