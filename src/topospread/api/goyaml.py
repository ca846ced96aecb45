"""YAML as Kubernetes reads it: sigs.k8s.io/yaml parses with go-yaml v2 (YAML 1.1) and converts
the result to JSON before decoding. So plain scalars resolve by go-yaml's rules (``y`` and ``off``
are booleans, ``0o17`` is an integer, no sexagesimal numbers), timestamps stay strings, map keys
become strings, and an integral float such as ``1.0`` is an integer. go-yaml's limits hold
(nesting depth, the alias expansion budget), and a key set twice in a mapping is reported as
sigs.k8s.io/yaml's strict conversion reports it, as field validation says.

The documents are built straight from libyaml's events (PyYAML's C parser); every problem is a
``ManifestError`` naming the file, the line and the column.
"""

from __future__ import annotations

import base64
import decimal
import json
import math
import re
import struct
from collections.abc import Iterator
from typing import Any, Final, NamedTuple

import yaml
from yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)

from topospread.api.strict import FieldValidation, current_mode, report
from topospread.errors import ManifestError

_TAG_PREFIX: Final = "tag:yaml.org,2002:"
_WORDS: Final[dict[str, bool | None]] = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE"), True),
    **dict.fromkeys(("on", "On", "ON"), True),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "false", "False", "FALSE"), False),
    **dict.fromkeys(("off", "Off", "OFF"), False),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), None),
}
_SPECIAL_FLOATS: Final[dict[str, float]] = {
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
}
_NUMBER_START: Final = frozenset("0123456789+-.")
# strconv.ParseInt(s, 0, 64) after go-yaml removed the underscores.
_GO_INT: Final = re.compile(
    r"([-+]?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|0[0-7]*|[1-9][0-9]*)"
)
# go-yaml's yamlStyleFloat, then strconv.ParseFloat; after a leading "." only ParseFloat.
_GO_FLOAT: Final = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_GO_DOT_FLOAT: Final = re.compile(r"\.[0-9]+(?:[eE][-+]?[0-9]+)?")
_INT64_MAX: Final = 2**63 - 1
_UINT64_MAX: Final = 2**64 - 1
_BASES: Final = {"x": 16, "X": 16, "b": 2, "B": 2, "o": 8, "O": 8}


class _Marker:
    """A sentinel: no key yet, a merge key, an anchor still being built, the end of a stream."""


_NO_KEY: Final = _Marker()
_END: Final = _Marker()
_MERGE: Final = _Marker()
_BUILDING: Final = _Marker()


def _yaml_error(problem: str, mark: Any) -> yaml.MarkedYAMLError:
    return yaml.MarkedYAMLError(None, None, problem, mark)


# go-yaml v2's limits, which sigs.k8s.io/yaml applies to every manifest: nesting (flow or block)
# deeper than this, and documents whose alias expansions outweigh the rest (a "billion laughs").
MAX_DEPTH: Final = 10_000


def _allowed_alias_ratio(decodes: int) -> float:
    """go-yaml v2's allowedAliasRatio: up to 400,000 decoded nodes, 99% of them may come from
    aliases; past 4,000,000 only 10%, falling linearly in between."""
    if decodes <= 400_000:
        return 0.99
    if decodes >= 4_000_000:
        return 0.10
    return 0.99 - 0.89 * (decodes - 400_000) / 3_600_000


class _Duplicates(NamedTuple):
    """Keys set twice in the mappings of the document that follows: go-yaml's strict unmarshal
    errors, one ``line N: key "k" already set in map`` each."""

    problems: list[str]


def _build_documents(loader: yaml.CSafeLoader) -> Iterator[Any]:
    """Each document of a stream as JSON-compatible data: sigs.k8s.io/yaml's view of it.

    Built straight from libyaml's events: composing PyYAML nodes first would cost twice the
    time and keep a node (and two marks) alive per scalar of a 100,000-pod List. Documents
    are yielded one by one so that a long stream is decoded while it is read.

    go-yaml's limits hold: nesting deeper than ``MAX_DEPTH`` and excessive aliasing are syntax
    errors, found before any alias is expanded (an alias is the anchor's object, shared). A key
    set twice in a mapping, by hand or through a merge, is collected per document and yielded
    as ``_Duplicates`` before it, unless field validation is off (then the last one wins).
    """
    get_event = loader.get_event
    words = _WORDS
    number_start = _NUMBER_START
    check_duplicates = current_mode() is not FieldValidation.IGNORE
    # The open collections outside `cur`, each with the key it will be stored under, its
    # anchor, the decode count at its start and its line; `key` is the key waiting for its
    # value when `cur` is a mapping.
    stack: list[tuple[Any, Any, str | None, int, int, bool]] = []
    cur: Any = None
    key: Any = _NO_KEY
    anchors: dict[str, Any] = {}
    # As go-yaml counts: every node decoded, and those decoded again through an alias; the
    # expanded size of each anchored node.
    decodes, aliased, sizes = 1, 0, {}
    flow_depth = block_depth = 0
    duplicates: list[str] = []
    while True:
        event: Any = get_event()
        cls = event.__class__
        if cls is ScalarEvent:
            decodes += 1
            value = event.value
            if event.implicit[0]:  # plain: typed by go-yaml's rules
                if value[:1] in number_start:
                    value = _json_value(_number(value), event)
                else:
                    value = words.get(value, value)
            elif event.tag is not None and event.tag != "!":
                value = _json_value(_tagged(event), event)
            if event.anchor is not None:
                anchors[event.anchor] = value
                sizes[event.anchor] = 1
        elif cls is MappingStartEvent or cls is SequenceStartEvent:
            if cur.__class__ is dict and key is _NO_KEY:
                raise _yaml_error("a mapping key must be a scalar", event.start_mark)
            flow = bool(event.flow_style)
            if flow:
                flow_depth += 1
            else:
                block_depth += 1
            if flow_depth > MAX_DEPTH or block_depth > MAX_DEPTH:
                raise _yaml_error(f"exceeded max depth of {MAX_DEPTH}", event.start_mark)
            decodes += 1
            stack.append((cur, key, event.anchor, decodes, event.start_mark.line, flow))
            if event.anchor is not None:
                anchors[event.anchor] = _BUILDING
            cur = {} if cls is MappingStartEvent else []
            key = _NO_KEY
            continue
        elif cls is MappingEndEvent or cls is SequenceEndEvent:
            value = cur
            cur, key, anchor, started, line, flow = stack.pop()
            if flow:
                flow_depth -= 1
            else:
                block_depth -= 1
            if anchor is not None:
                anchors[anchor] = value
                sizes[anchor] = decodes - started + 1
        elif cls is AliasEvent:
            value = anchors.get(event.anchor, _NO_KEY)
            if value is _NO_KEY:
                raise _yaml_error(f"found undefined alias {event.anchor!r}", event.start_mark)
            if value is _BUILDING:
                raise _yaml_error(f"alias {event.anchor!r} refers to itself", event.start_mark)
            expanded = sizes[event.anchor]
            decodes += 1 + expanded
            aliased += expanded
            # NOTE: go-yaml checks at every node; within an alias's burst of nodes the ratio
            # only grows, so its end is where the check can first fail.
            if (
                aliased > 100
                and decodes > 1000
                and aliased / decodes > _allowed_alias_ratio(decodes)
            ):
                raise _yaml_error("document contains excessive aliasing", event.start_mark)
        elif cls is DocumentStartEvent:
            anchors, sizes = {}, {}
            decodes, aliased = 1, 0
            continue
        elif cls is StreamEndEvent:
            return
        else:
            continue  # stream start, document end
        # Store the finished value in the collection that holds it.
        if cur is None:
            if duplicates:
                yield _Duplicates(duplicates)
                duplicates = []
            yield value
        elif cur.__class__ is list:
            cur.append(value)
        elif key is _NO_KEY:
            if value.__class__ is str:
                plain_merge = value == "<<" and cls is ScalarEvent and event.implicit[0]
                key = _MERGE if plain_merge else value
            else:
                key = _json_key_of(event, value)
        elif key is _MERGE:
            if check_duplicates:
                at = line if cls is MappingEndEvent or cls is SequenceEndEvent else None
                duplicates += _merge_duplicates(
                    cur, value, event.start_mark.line if at is None else at
                )
            _merge(cur, value, event)
            key = _NO_KEY
        else:
            if check_duplicates and key in cur:
                at = line if cls is MappingEndEvent or cls is SequenceEndEvent else None
                where = event.start_mark.line if at is None else at
                duplicates.append(f"line {where + 1}: key {_go_quote(key)} already set in map")
            cur[key] = value
            key = _NO_KEY


def _merge_duplicates(target: dict[str, Any], value: Any, line: int) -> list[str]:
    """The keys a merge would set twice: go-yaml's strict decoder sets merged keys one by one,
    the sequence's last map first, and a key already in the mapping is an error."""
    maps = [value] if isinstance(value, dict) else value
    if not isinstance(maps, list):
        return []  # _merge names the mistake
    seen, problems = set(target), []
    for m in reversed(maps):
        for k in m if isinstance(m, dict) else ():
            if k in seen:
                problems.append(f"line {line + 1}: key {_go_quote(k)} already set in map")
            seen.add(k)
    return problems


def _go_quote(key: str) -> str:
    """A map key as Go's %#v prints it (a quoted string)."""
    return json.dumps(key, ensure_ascii=False)


def _json_key_of(event: Any, value: Any) -> str:
    """sigs.k8s.io/yaml turns every map key into a JSON string, formatted as Go formats it."""
    if value.__class__ is int and event.__class__ is ScalarEvent and event.implicit[0]:
        value = _number(event.value)  # maybe the float64 go-yaml saw, before the JSON trip
    if value is None:
        raise _yaml_error("a null mapping key cannot be converted to JSON", event.start_mark)
    if isinstance(value, dict | list):
        raise _yaml_error("a mapping key must be a scalar", event.start_mark)
    return str(json_key(value))


def _merge(target: dict[str, Any], value: Any, event: Any) -> None:
    # go-yaml applies a merge where it stands: it overrides the keys above it, keys below it
    # override the merged ones, and of a sequence of maps the first one wins.
    maps = [value] if isinstance(value, dict) else value
    if not isinstance(maps, list) or not all(isinstance(m, dict) for m in maps):
        raise _yaml_error(
            "map merge requires map or sequence of maps as the value", event.start_mark
        )
    for m in reversed(maps):
        target.update(m)


def _number(value: str) -> Any:
    """A plain scalar starting like a number, by go-yaml v2's resolve(): int, float or string."""
    special = _SPECIAL_FLOATS.get(value)
    if special is not None:
        return special
    if value[0] == ".":
        if _GO_DOT_FLOAT.fullmatch(value):
            f = float(value)
            if not math.isinf(f):  # ParseFloat's range error: go-yaml keeps the string
                return f
        return value
    plain = value.replace("_", "") if "_" in value else value
    m = _GO_INT.fullmatch(plain)
    if m is not None:
        sign, digits = m.groups()
        base = 10
        if len(digits) > 1 and digits[0] == "0":
            base = _BASES.get(digits[1], 8)
            digits = digits[1:] if base == 8 and digits[1] not in "oO" else digits[2:]
        number = int(digits, base)
        # ParseInt into an int64, else ParseUint (no sign) into a uint64, else maybe a float.
        limit = {"-": _INT64_MAX + 1, "+": _INT64_MAX}.get(sign, _UINT64_MAX)
        if number <= limit:
            return -number if sign == "-" else number
    if _GO_FLOAT.fullmatch(plain):
        f = float(plain)
        if not math.isinf(f):
            return f
    return value


def _tagged(event: Any) -> Any:
    """A scalar with an explicit tag; go-yaml ignores tags it does not know (the text stays)."""
    tag: str = event.tag
    text: str = event.value
    if not tag.startswith(_TAG_PREFIX):
        return text
    short = tag[len(_TAG_PREFIX) :]
    if short == "binary":
        try:
            return base64.b64decode(text).decode("utf-8", "replace")
        except ValueError as err:
            raise _yaml_error(f"cannot decode !!binary: {err}", event.start_mark) from err
    if short not in ("null", "bool", "int", "float"):
        return text  # !!str, !!timestamp (kept as text, as Kubernetes does) and the rest
    value: Any = _WORDS.get(text, text) if text[:1] not in _NUMBER_START else _number(text)
    ok = {
        "null": value is None,
        "bool": isinstance(value, bool),
        "int": isinstance(value, int) and not isinstance(value, bool),
        "float": isinstance(value, int | float) and not isinstance(value, bool),
    }[short]
    if not ok:
        raise _yaml_error(f"cannot decode `{text}` as a !!{short}", event.start_mark)
    return float(value) if short == "float" else value


def _json_value(value: Any, event: Any) -> Any:
    """A scalar after sigs.k8s.io/yaml's trip through JSON (json.Marshal of a float64)."""
    if value.__class__ is not float:
        return value
    if math.isinf(value) or math.isnan(value):
        raise _yaml_error(f"{event.value} cannot be represented in JSON", event.start_mark)
    # Go prints an integral float64 below 1e21 without a fraction, as its shortest digits then
    # zeros (repr's digits): 1.0 decodes into an int32.
    if value.is_integer() and abs(value) < 1e21:
        return int(value) if abs(value) < 2**53 else int(decimal.Decimal(repr(value)))
    return value


def _go_float32_g(value: float) -> str:
    """strconv.FormatFloat(v, 'g', -1, 32), which sigs.k8s.io/yaml uses for float map keys."""
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    packed = struct.pack("<f", value)
    (f32,) = struct.unpack("<f", packed)
    if f32 == 0:
        return "0"
    for digits in range(1, 10):
        text = f"{f32:.{digits - 1}e}"
        if struct.pack("<f", float(text)) == packed:
            break
    exponent = int(text[text.index("e") + 1 :])
    if exponent < -4 or exponent >= 6:
        mantissa, _, exp_text = text.partition("e")
        return f"{mantissa}e{exp_text[0]}{exp_text[1:].lstrip('0').rjust(2, '0')}"
    return f"{float(text):.{max(digits - 1 - exponent, 0)}f}"


def parse_yaml(text: str, source: str) -> Iterator[Any]:
    """The documents of a YAML stream, one by one; a syntax error is a ManifestError."""
    loader = yaml.CSafeLoader(text)
    try:
        for doc in _build_documents(loader):
            if doc.__class__ is _Duplicates:
                # sigs.k8s.io/yaml's strict conversion, reported as field validation says.
                report(
                    source, "error converting YAML to JSON: yaml: unmarshal errors: ", doc.problems
                )
                continue
            yield doc
    except yaml.MarkedYAMLError as err:
        raise ManifestError(_yaml_message(err, source)) from err
    except yaml.reader.ReaderError as err:
        line, column = _line_column(text, err.position)
        raise ManifestError(
            f"{source}: line {line}, column {column}: could not parse YAML: "
            f"unacceptable character #x{err.character:04x}: {err.reason}"
        ) from err
    except yaml.YAMLError as err:
        raise ManifestError(f"{source}: could not parse YAML: {err}") from err
    finally:
        loader.dispose()


def _yaml_message(err: yaml.MarkedYAMLError, source: str) -> str:
    where = source
    mark = err.problem_mark or err.context_mark
    if mark is not None:
        where = f"{source}: line {mark.line + 1}, column {mark.column + 1}"
    problem = err.problem or err.context or "invalid YAML"
    if err.context and err.problem and err.context_mark is not None:
        c = err.context_mark
        problem += f" ({err.context} at line {c.line + 1}, column {c.column + 1})"
    elif err.context and err.problem:
        problem += f" ({err.context})"
    return f"{where}: could not parse YAML: {problem}"


def _line_column(text: str, index: int) -> tuple[int, int]:
    line_start = text.rfind("\n", 0, index) + 1
    return text.count("\n", 0, index) + 1, index - line_start + 1


def decode_utf8(data: bytes, source: str) -> str:
    # go-yaml also accepts UTF-16 with a byte order mark; a UTF-8 one is skipped.
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as err:
            raise ManifestError(f"{source}: invalid UTF-16 text") from err
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        start = err.start
        line_start = data.rfind(b"\n", 0, start) + 1
        line = data.count(b"\n", 0, start) + 1
        column = len(data[line_start:start].decode("utf-8", "replace")) + 1
        raise ManifestError(
            f"{source}: line {line}, column {column}: invalid UTF-8 "
            f"(byte 0x{data[start]:02x}); manifests must be UTF-8 text"
        ) from err


def json_key(key: Any) -> Any:
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return _go_float32_g(key)
    return key
