"""Manifest files (YAML or JSON, as ``kubectl get -o yaml|json`` prints them) into typed objects.

This is the one place raw manifest data becomes the frozen structs of ``topospread.api.types``.
It reads single objects, multi-document YAML streams, ``kind: List`` and typed lists
(``PodList``, ...), nested lists, and manifests already parsed by other code (a case file that
embeds its cluster). Objects are dispatched on apiVersion and kind through a registry that higher
layers extend; a kind nobody registered comes back as an ``UnknownObject``, never dropped.

YAML is read as Kubernetes reads it: sigs.k8s.io/yaml parses with go-yaml v2 (YAML 1.1) and
converts the result to JSON before decoding. So plain scalars resolve by go-yaml's rules (``y`` and
``off`` are booleans, ``0o17`` is an integer, no sexagesimal numbers), timestamps stay strings,
map keys become strings, and an integral float such as ``1.0`` is an integer. ``null`` means unset
wherever the API decodes it so. Every problem is a ``ManifestError`` whose one-line message names
the file, the object and the field.
"""

from __future__ import annotations

import base64
import bisect
import decimal
import gc
import json
import math
import os
import re
import struct
import sys
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final, NamedTuple, TypeAlias, TypeVar, overload

import msgspec
import msgspec.inspect as mi
import yaml

try:
    import ryml
except ImportError:  # pragma: no cover - rapidyaml is a dependency; the exact path suffices
    ryml = None
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

from topospread.api import types as t
from topospread.api.strict import (
    DuplicateKeys,
    FieldValidation,
    check_object,
    current_mode,
    duplicates_marked,
    report,
)
from topospread.errors import ManifestError

Object: TypeAlias = msgspec.Struct
"""What a manifest decodes to: a registered API struct, or an ``UnknownObject``."""

T = TypeVar("T", bound=msgspec.Struct)


class UnknownObject(msgspec.Struct, frozen=True, kw_only=True):
    """An object whose apiVersion and kind no module registered; ``raw`` is its parsed data."""

    api_version: str
    kind: str
    namespace: str
    name: str
    raw: dict[str, Any]


# ---------------------------------------------------------------------------------------------
# The kind registry


class _Kind(NamedTuple):
    cls: type[msgspec.Struct]
    api_version: str
    kind: str
    namespaced: bool


_BY_GVK: dict[tuple[str, str], _Kind] = {}
_BY_CLASS: dict[type[msgspec.Struct], _Kind] = {}


def register_kind(
    cls: type[msgspec.Struct], *, api_version: str, kind: str, namespaced: bool
) -> None:
    """Decode objects of ``api_version``/``kind`` into ``cls`` from now on.

    A namespaced kind's struct must have ``metadata: ObjectMeta``; its objects get the namespace
    ``default`` when the manifest leaves it empty, as the API server does.
    """
    entry = _Kind(cls, api_version, kind, namespaced)
    known = _BY_GVK.get((api_version, kind))
    if known is not None and known.cls is not cls:
        raise ValueError(f"{api_version} {kind} is already registered to {known.cls.__name__}")
    _BY_GVK[api_version, kind] = entry
    _BY_CLASS[cls] = entry


register_kind(t.Node, api_version="v1", kind="Node", namespaced=False)
register_kind(t.Pod, api_version="v1", kind="Pod", namespaced=True)
register_kind(t.Service, api_version="v1", kind="Service", namespaced=True)
register_kind(
    t.ReplicationController, api_version="v1", kind="ReplicationController", namespaced=True
)
register_kind(t.ReplicaSet, api_version="apps/v1", kind="ReplicaSet", namespaced=True)
register_kind(t.StatefulSet, api_version="apps/v1", kind="StatefulSet", namespaced=True)
register_kind(t.Deployment, api_version="apps/v1", kind="Deployment", namespaced=True)
register_kind(t.DaemonSet, api_version="apps/v1", kind="DaemonSet", namespaced=True)
register_kind(t.Job, api_version="batch/v1", kind="Job", namespaced=True)
register_kind(t.CronJob, api_version="batch/v1", kind="CronJob", namespaced=True)
register_kind(t.Namespace, api_version="v1", kind="Namespace", namespaced=False)
register_kind(
    t.PriorityClass, api_version="scheduling.k8s.io/v1", kind="PriorityClass", namespaced=False
)
register_kind(
    t.PodDisruptionBudget, api_version="policy/v1", kind="PodDisruptionBudget", namespaced=True
)


# ---------------------------------------------------------------------------------------------
# Public entry points


def load_manifests(path: str | os.PathLike[str]) -> list[Object]:
    """Every object in a YAML or JSON manifest file, Lists flattened, in file order."""
    source = os.fspath(path)
    return load_text(_read(source), source)


def load_text(text: str | bytes, source_name: str) -> list[Object]:
    """Every object in manifest text; ``source_name`` prefixes error messages."""
    try:
        return _load_text(text, source_name)
    except RecursionError as err:
        # Nesting below go-yaml's MAX_DEPTH that is still too deep for the decoders here; no
        # manifest comes close (a pod's spec nests about a dozen levels).
        raise ManifestError(
            f"{source_name}: could not decode: nested too deeply "
            f"(more than {sys.getrecursionlimit()} levels)"
        ) from err


def _load_text(text: str | bytes, source_name: str) -> list[Object]:
    out: list[Object] = []
    with _gc_paused():
        if _looks_like_json(text):
            raw = text if isinstance(text, bytes) else text.encode()
            marked = _json_duplicates(raw)
            if marked is not None:
                with duplicates_marked():
                    _walk_root(marked, source_name, out)
                return out
            if _load_json(raw, source_name, out):
                return out
        fast = _fast_yaml(text, source_name)
        if fast is not None:
            return fast
        if isinstance(text, bytes):
            text = _decode_utf8(text, source_name)
        if not text or text.isspace():
            raise ManifestError(f"{source_name}: the file is empty")
        # Documents are decoded as they are parsed, one read ahead: a file of one document
        # names no document number in its errors.
        docs = _parse_yaml(text, source_name)
        doc, ahead = next(docs, _END), next(docs, _END)
        single, n, empty = ahead is _END, 1, True
        while doc is not _END:
            empty = empty and doc is None
            _walk_root(doc, source_name if single else f"{source_name}: document {n}", out)
            doc, ahead, n = ahead, next(docs, _END) if ahead is not _END else _END, n + 1
        if empty:
            raise ManifestError(
                f"{source_name}: no objects: the file holds only comments or empty documents"
            )
    return out


def decode_manifests(data: Any, source: str) -> list[Object]:
    """Objects from already-parsed data: one manifest, a List, or a list of them (None is [])."""
    out: list[Object] = []
    with _gc_paused():
        _walk(data, source, None, out)
    return out


@overload
def decode_object(data: Any, expected: type[T], where: str) -> T: ...
@overload
def decode_object(data: Any, expected: None, where: str) -> Object: ...
def decode_object(data: Any, expected: type[T] | None, where: str) -> Object:
    """One object from parsed data; ``where`` (e.g. ``case.yaml: nodes[2]``) prefixes errors.

    With ``expected`` the object may leave out apiVersion and kind; a different kind is an error.
    """
    if expected is not None and expected not in _BY_CLASS:
        raise TypeError(f"{expected.__name__} is not a registered kind")
    if (
        isinstance(data, dict)
        and expected is None
        and _is_list(data.get("apiVersion"), data.get("kind"), "items" in data)
    ):
        raise ManifestError(f"{where}: expected one object, got a {data['kind']}")
    return _decode_one(data, where, expected, None)


def read_yaml_documents(path: str | os.PathLike[str]) -> list[Any]:
    """The non-empty documents of a YAML file, parsed with Kubernetes' YAML rules."""
    source = os.fspath(path)
    text = _read(source)
    with _gc_paused():
        return [doc for doc in _parse_yaml(_decode_utf8(text, source), source) if doc is not None]


# ---------------------------------------------------------------------------------------------
# Reading files


def _read(source: str) -> bytes:
    try:
        with open(source, "rb") as f:
            return f.read()
    except FileNotFoundError as err:
        raise ManifestError(f"{source}: no such file or directory") from err
    except IsADirectoryError as err:
        raise ManifestError(f"{source}: is a directory, not a manifest file") from err
    except OSError as err:
        raise ManifestError(f"{source}: cannot read the file: {err.strerror}") from err


def _decode_utf8(data: bytes, source: str) -> str:
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


@contextmanager
def _gc_paused() -> Iterator[None]:
    # A bulk load allocates millions of objects that all survive; collections triggered by the
    # allocation count would rescan them again and again for nothing.
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# ---------------------------------------------------------------------------------------------
# YAML, as sigs.k8s.io/yaml reads it

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
    return str(_json_key(value))


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


def _parse_yaml(text: str, source: str) -> Iterator[Any]:
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


# ---------------------------------------------------------------------------------------------
# YAML fast path: rapidyaml parses, emits JSON, and msgspec decodes it as a JSON manifest.
#
# NOTE: this is exact only where rapidyaml (YAML 1.2) and go-yaml v2 (YAML 1.1) read the text
# alike. They differ on plain scalars such as yes/no/on/off/y/n, ~, Null, 0755, 0x1F, 1_000,
# .inf, +1 (as values or as keys) and on anchors, aliases, tags, merge keys and directives. The
# fast path declines when the YAML holds any of those constructs, a plain risky value, or a
# non-empty flow collection (kubectl never writes one; hand-written files take the exact path),
# and when a key in the JSON it produced reads as a risky scalar (quoted or not: declining only
# costs speed). rapidyaml turns other divergent scalars into invalid JSON, which msgspec
# rejects. Any failure falls back to the exact path, which also gives the precise message.

_RISKY_SCALAR: Final = (
    rb"(?:y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF|True|TRUE|False|FALSE|~|Null|NULL"
    rb"|[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN)"
    # Leading zero: octal, decimal (0789 is a float to go-yaml), 041e8, 0x1F, 0o17, 0b101;
    # not a hex string such as a node's machineID (041e824e…, 0bde35c1…): both read a string.
    rb"|[-+]?0(?:[0-9_]+(?:[eE][-+]?[0-9]+)?|[xX][0-9a-fA-F_]*|[oO][0-7_]*|[bB][01_]*)"
    rb"|\+[0-9.][0-9a-zA-Z_.+-]*|[0-9]+_[0-9a-zA-Z_.+-]*|[0-9]+\.|\.[0-9][0-9a-zA-Z_.+-]*)"
)
# A plain risky scalar as a block mapping value or block sequence item.
# NOTE: each search below is split in patterns that start with a literal, which re scans for
# quickly; one pattern starting with an alternation or a class is tried at every position
# (a quarter of the fast path's time on kubectl output).
_RISKY_YAML_VALUE: Final = tuple(
    re.compile(lead + _RISKY_SCALAR + rb"[ \t]*(?:#|\r?$)", re.MULTILINE)
    for lead in (rb": +", rb"- +")
)
_FLOW_WITH_CONTENT: Final = tuple(
    re.compile(lead + rb"[ \t]*[^\]}\s]") for lead in (rb"\[", rb"\{")
)
_YAML_STRUCTURE: Final = re.compile(
    rb"(?:^|[\s\[{,])[&*!][^\s]|<<[ \t]*:|(?:^|\n)[ \t]*\?[ \t\r\n]", re.MULTILINE
)
# A JSON key that go-yaml would have read as a bool, a null or a number other than a plain
# decimal integer (which it would have printed differently).
_RISKY_JSON_KEY: Final = re.compile(
    rb'"(?:y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF|True|TRUE|False|FALSE|~|Null|NULL'
    rb'|<<|(?:[-+.]|0[0-9xXoObB_]|[0-9]+[^0-9"])[^"]*)":'
)


def _fast_yaml(text: str | bytes, source: str) -> list[Object] | None:
    """Objects through the fast path, or None when it declines or cannot decide.

    A large List or document stream is cut at item or document boundaries into parts of about
    ``_CHUNK_BYTES``, decoded one by one or, with several cores, by forked workers: rapidyaml's
    tree and JSON for a whole 350 MiB file cost gigabytes, and faulting that memory in cost more
    time than parsing.
    """
    if ryml is None:
        return None
    raw = text if isinstance(text, bytes) else text.encode()
    if len(raw) < _FAST_MIN_BYTES and current_mode() is not FieldValidation.IGNORE:
        return None
    if len(raw) < 2 * _CHUNK_BYTES:
        return _fast_yaml_one(raw, source)
    chunks = _split_yaml(raw, len(raw) // _CHUNK_BYTES)
    if chunks is None:
        return _fast_yaml_one(raw, source)
    workers = min(os.cpu_count() or 1, _MAX_WORKERS, len(chunks))
    if workers > 1:
        return _fast_yaml_parallel(chunks, workers)
    out: list[Object] = []
    for chunk in chunks:
        objs = _fast_yaml_one(chunk, source)
        if objs is None:
            return None
        out += objs
    return out or None


@contextmanager
def _stderr_silenced() -> Iterator[None]:
    """rapidyaml's C++ error handler writes to file descriptor 2 before it raises; a file the
    fast path cannot parse goes down the exact path, which says what is wrong in one line."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _fast_yaml_one(raw: bytes, source: str) -> list[Object] | None:
    if raw.startswith(b"%") or b"\n%" in raw:
        return None
    if any(c in raw for c in (b"&", b"*", b"!", b"<<", b"?")) and _YAML_STRUCTURE.search(raw):
        return None
    if any(p.search(raw) for p in (*_FLOW_WITH_CONTENT, *_RISKY_YAML_VALUE)):
        return None
    try:
        with _stderr_silenced():
            tree = ryml.parse_in_arena(raw)
        root = tree.root_id()
        docs = _children(tree, root) if tree.is_stream(root) else [root]
        out: list[Object] = []
        for n, doc in enumerate(docs, 1):
            if not tree.has_children(doc):
                if tree.has_val(doc) and tree.val(doc).tobytes().strip() not in (b"", b"null"):
                    return None
                continue  # an empty document
            where = source if len(docs) == 1 else f"{source}: document {n}"
            js = ryml.emit_json_malloc(tree, doc).encode()
            if _RISKY_JSON_KEY.search(js) is not None:
                return None
            if not _load_json(js, where, out):
                return None
    except Exception:
        return None
    return out or None


# NOTE: cutting is exact because a List's items and a stream's documents are decoded
# independently (anchors, which could tie them together, make the fast path decline) and the
# parts' objects are concatenated in file order. A cut is made only before a line that starts
# with "- " (a List's items, as kubectl writes them, at column 0) or "---": inside a block
# scalar such a line would end the scalar, and inside a quoted scalar the cut leaves the quote
# open, which rapidyaml rejects. Any part that declines or fails sends the whole file down the
# exact path, which also gives the precise message.
_CHUNK_BYTES: Final = 4 << 20
# NOTE: rapidyaml keeps the last of two equal keys without a word. Text below this size (every
# hand-written manifest and chart output seen) takes the exact path, which reports them as
# sigs.k8s.io/yaml does; larger text is machine-written (kubectl get, cluster dumps), where a
# duplicate key cannot occur, and keeps the fast path's speed.
_FAST_MIN_BYTES: Final = 1 << 20
_MAX_WORKERS: Final = 8
_TOP_KEY: Final = re.compile(rb"(apiVersion|kind|items):[ \t]*(\S*)[ \t]*\r?$")
_TOP_LEVEL_LINE: Final = re.compile(rb"\n[^ \t\-#\r\n]")
_CHUNKS: list[bytes] = []


def _line_starts(raw: bytes, prefix: bytes, start: int = 0, end: int | None = None) -> list[int]:
    """Offsets of the lines in raw[start:end] that begin with ``prefix`` (start counts as one)."""
    end = len(raw) if end is None else end
    out = [start] if raw.startswith(prefix, start) else []
    needle = b"\n" + prefix
    i = raw.find(needle, start, end)
    while i >= 0:
        out.append(i + 1)
        i = raw.find(needle, i + 1, end)
    return out


def _split_yaml(raw: bytes, parts: int) -> list[bytes] | None:
    """The text cut into about ``parts`` standalone YAML texts whose objects, in order, are its
    objects; None when it is neither a document stream nor a List with items at column 0."""
    if parts < 2:
        return None
    docs = [
        i
        for i in _line_starts(raw, b"---")
        if raw[i + 3 : i + 4] in (b"", b" ", b"\t", b"\n", b"\r")
    ]
    if len(docs) >= 2:
        cuts = _cuts(docs, len(raw), parts)
        return [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    if docs:
        return None
    # A kubectl-style List: top-level keys at column 0, items as "- " entries at column 0.
    top: dict[bytes, tuple[int, bytes]] = {}
    for key in (b"apiVersion", b"kind", b"items"):
        for pos in _line_starts(raw, key + b":"):
            line_end = raw.find(b"\n", pos)
            m = _TOP_KEY.match(raw, pos, len(raw) if line_end < 0 else line_end)
            if m is not None:
                top[key] = (pos, m.group(2))
    if b"items" not in top or top[b"items"][1] or b"kind" not in top:
        return None
    start = raw.find(b"\n", top[b"items"][0]) + 1
    end = min([pos for pos, _ in top.values() if pos > start], default=len(raw))
    # Any other top-level key (kubectl's List metadata) ends the items too.
    other = _TOP_LEVEL_LINE.search(raw, start, end)
    if other is not None:
        end = other.start() + 1
    items = _line_starts(raw, b"- ", start, end)
    if len(items) < 2 or items[0] != start:
        return None
    head = b"apiVersion: " + top.get(b"apiVersion", (0, b"v1"))[1] + b"\n"
    head += b"kind: " + top[b"kind"][1] + b"\nitems:\n"
    cuts = _cuts(items, end, parts)
    return [head + raw[a:b] for a, b in zip([start, *cuts], [*cuts, end], strict=True)]


def _cuts(starts: list[int], end: int, parts: int) -> list[int]:
    """Boundaries (from ``starts``) splitting [starts[0], end) into ``parts`` near-equal runs."""
    cuts: list[int] = []
    for k in range(1, parts):
        target = starts[0] + (end - starts[0]) * k // parts
        i = bisect.bisect_left(starts, target)
        if 0 < i < len(starts) and (not cuts or starts[i] > cuts[-1]):
            cuts.append(starts[i])
    return cuts


def _fast_yaml_worker(index: int) -> tuple[list[str], bytes] | None:
    objs = _fast_yaml_one(_CHUNKS[index], "part")
    if objs is None:
        return None
    return [type(o).__name__ for o in objs], msgspec.msgpack.encode(objs)


def _fast_yaml_parallel(chunks: list[bytes], workers: int) -> list[Object] | None:
    """The parts decoded by forked workers, taken back in order as msgpack.

    A ``concurrent.futures`` pool, not ``multiprocessing.Pool``: leaving a ``Pool`` early (one
    part declines) calls ``terminate()``, which can hang for ever when its task thread is
    blocked on the queue lock. Here the parts not yet started are cancelled and the running
    ones finish before the workers exit.
    """
    import multiprocessing
    from concurrent.futures import Future, ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    global _CHUNKS
    _CHUNKS = chunks  # inherited by the forked workers, never pickled
    classes: list[type[msgspec.Struct]] = [*_BY_CLASS, UnknownObject]
    decoders = {cls.__name__: msgspec.msgpack.Decoder(cls) for cls in classes}
    out: list[Object] = []
    pool: ProcessPoolExecutor | None = None
    try:
        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))
        futures: deque[Future[tuple[list[str], bytes] | None]] = deque(
            pool.submit(_fast_yaml_worker, index) for index in range(len(chunks))
        )
        while futures:  # each result is let go once decoded
            result = futures.popleft().result()
            if result is None:
                return None
            names, payload = result
            items = msgspec.msgpack.decode(payload, type=list[msgspec.Raw])
            out += [decoders[n].decode(i) for n, i in zip(names, items, strict=True)]
    except (OSError, ValueError, BrokenProcessPool, msgspec.DecodeError):
        return None  # no fork here, or a worker died: the exact path still works
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        _CHUNKS = []
    return out or None


def _children(tree: Any, node: int) -> list[int]:
    out = []
    child = tree.first_child(node)
    while child != ryml.NONE:
        out.append(child)
        child = tree.next_sibling(child)
    return out


# ---------------------------------------------------------------------------------------------
# JSON fast path: msgspec decodes straight into the typed structs


class _Head(msgspec.Struct, rename="camel"):
    """What dispatch needs of a JSON object; the rest stays undecoded."""

    api_version: str | None = None
    kind: str | None = None
    items: list[msgspec.Raw] | None = None


_HEAD_DECODER: Final = msgspec.json.Decoder(list[msgspec.Raw] | _Head)
_ITEM_HEAD_DECODER: Final = msgspec.json.Decoder(_Head)
_DECODERS: dict[type[msgspec.Struct], msgspec.json.Decoder[Any]] = {}


_JSON_START: Final = re.compile(rb"(?:\xef\xbb\xbf)?[ \t\r\n]*[{\[]")
_JSON_START_STR: Final = re.compile(r"\ufeff?[ \t\r\n]*[{\[]")


def _looks_like_json(text: str | bytes) -> bool:
    # As k8s.io/apimachinery's YAMLOrJSONDecoder sniffs: JSON starts with "{" (or here "[").
    if isinstance(text, bytes):
        return _JSON_START.match(text) is not None
    return _JSON_START_STR.match(text) is not None


def _load_json(raw: bytes, source: str, out: list[Object]) -> bool:
    """Decode JSON manifests into ``out``; False if ``raw`` is not JSON but may be YAML."""
    raw = raw.removeprefix(b"\xef\xbb\xbf")
    try:
        try:
            head = _HEAD_DECODER.decode(raw)
        except RecursionError:
            return False  # the YAML path reads JSON too, and says how deep is too deep
        except msgspec.DecodeError as err:
            if source.endswith(".json"):
                raise ManifestError(_json_syntax_message(err, raw, source)) from err
            return False  # a YAML flow mapping also starts with "{"
        except msgspec.ValidationError:
            _walk_root(msgspec.json.decode(raw), source, out)
        else:
            _walk_json(raw, head, source, None, out)
    except UnicodeDecodeError:
        # msgspec checks the strings it decodes; name the first bad byte in the file.
        _decode_utf8(raw, source)
        raise
    return True


def _json_duplicates(raw: bytes) -> Any | None:
    """Small JSON parsed with each object whose keys came twice marked (``DuplicateKeys``), or
    None when no key came twice (or the text is large, not JSON, or field validation is off).

    NOTE: like rapidyaml, msgspec keeps the last of two equal keys without a word; the API
    server's strict decoding reports them (``duplicate field "spec.replicas"``). Large JSON is
    machine-written (kubectl get), where a key cannot come twice, and keeps msgspec's speed.
    """
    if len(raw) >= _FAST_MIN_BYTES or current_mode() is FieldValidation.IGNORE:
        return None
    found = False

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal found
        out: dict[str, Any] = {}
        again = []
        for key, value in items:
            if key in out:
                again.append((key, len(out)))
            out[key] = value
        if not again:
            return out
        found = True
        marked = DuplicateKeys(out)
        marked.duplicates = again
        return marked

    try:
        data = json.loads(raw.removeprefix(b"\xef\xbb\xbf"), object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return None  # not JSON (or too deep): the other paths say what is wrong
    return data if found else None


def _json_syntax_message(err: msgspec.DecodeError, raw: bytes, source: str) -> str:
    detail = str(err)
    m = re.search(r"\(byte (\d+)\)$", detail)
    offset = int(m.group(1)) if m else len(raw)
    if m:
        detail = detail[: m.start()].strip().removeprefix("JSON is malformed: ")
    else:
        detail = "unexpected end of input"
    line_start = raw.rfind(b"\n", 0, offset) + 1
    line = raw.count(b"\n", 0, offset) + 1
    column = len(raw[line_start:offset].decode("utf-8", "replace")) + 1
    return f"{source}: line {line}, column {column}: could not parse JSON: {detail}"


def _walk_json(
    raw: bytes | msgspec.Raw,
    head: list[msgspec.Raw] | _Head,
    where: str,
    default: tuple[str, str] | None,
    out: list[Object],
) -> None:
    if isinstance(head, list):
        raise ManifestError(f"{where}: {_SEQUENCE_DOCUMENT}")
    api_version, kind, items = head.api_version, head.kind, head.items
    if kind is None and default is not None:
        api_version, kind = api_version or default[0], default[1]
    entry = _BY_GVK.get((api_version or "", kind or ""))
    if entry is not None:
        try:
            obj = _decoder(entry.cls).decode(raw)
        except msgspec.ValidationError:
            pass  # the slow path below explains what is wrong, naming the field
        else:
            obj = _defaulted(obj, entry) if entry.namespaced else obj
            check_object(None, entry.api_version, entry.kind, _where(where, obj, entry), raw=raw)
            out.append(obj)
            return
    elif items is not None and _is_list(api_version, kind, True):
        item_default = _item_default(api_version, kind)
        for i, item in enumerate(items):
            _walk_json_item(item, f"{where}: items[{i}]", item_default, out)
        return
    _walk(msgspec.json.decode(raw), where, default, out)


def _walk_json_item(
    raw: msgspec.Raw, where: str, default: tuple[str, str] | None, out: list[Object]
) -> None:
    try:
        head = _ITEM_HEAD_DECODER.decode(raw)
    except msgspec.ValidationError:
        _walk(msgspec.json.decode(raw), where, default, out)
    else:
        _walk_json(raw, head, where, default, out)


def _decoder(cls: type[msgspec.Struct]) -> msgspec.json.Decoder[Any]:
    decoder = _DECODERS.get(cls)
    if decoder is None:
        decoder = _DECODERS[cls] = msgspec.json.Decoder(cls)
    return decoder


# ---------------------------------------------------------------------------------------------
# Parsed data into objects


def _is_list(api_version: Any, kind: Any, has_items: bool) -> bool:
    """A ``List`` or a typed list (``PodList``) unless someone registered that kind."""
    return (
        has_items
        and isinstance(kind, str)
        and kind.endswith("List")
        and (api_version, kind) not in _BY_GVK
    )


def _item_default(api_version: Any, kind: Any) -> tuple[str, str] | None:
    """The apiVersion and kind a list's items have when they leave them out."""
    if kind == "List":
        return None
    # Items of a typed list, as the API server returns them, leave out apiVersion and kind.
    return (api_version if isinstance(api_version, str) else "", kind[: -len("List")])


_SEQUENCE_DOCUMENT: Final = (
    "expected an object (a mapping) or a List, got a sequence: kubectl reads one object per "
    "document (separate them with ---, or give them as the items of a kind: List)"
)


def _walk_root(data: Any, where: str, out: list[Object]) -> None:
    """A whole document of a manifest file: a manifest or a List. A sequence is refused, as
    kubectl refuses it (it cannot decode an array as an object)."""
    if isinstance(data, list):
        raise ManifestError(f"{where}: {_SEQUENCE_DOCUMENT}")
    _walk(data, where, None, out)


def _walk(data: Any, where: str, default: tuple[str, str] | None, out: list[Object]) -> None:
    if data is None:
        return  # an empty YAML document, as kubectl skips it
    if isinstance(data, list):
        for i, item in enumerate(data):
            if item is None:
                raise ManifestError(f"{where}[{i}]: expected an object (a mapping), got null")
            _walk(item, f"{where}[{i}]", None, out)
        return
    if isinstance(data, dict) and _is_list(
        data.get("apiVersion"), data.get("kind"), "items" in data
    ):
        items = data["items"]
        if items is None:
            return
        if not isinstance(items, list):
            raise ManifestError(f"{where}: items: expected a list, got {_render(items)}")
        item_default = _item_default(data["apiVersion"], data["kind"])
        for i, item in enumerate(items):
            item_where = f"{where}: items[{i}]"
            if item is None:
                raise ManifestError(f"{item_where}: expected an object (a mapping), got null")
            _walk(item, item_where, item_default, out)
        return
    out.append(_decode_one(data, where, None, default))


def _decode_one(
    data: Any, where: str, expected: type[msgspec.Struct] | None, default: tuple[str, str] | None
) -> Object:
    if not isinstance(data, dict):
        raise ManifestError(f"{where}: expected an object (a mapping), got {_render(data)}")
    api_version = data.get("apiVersion")
    kind = data.get("kind")
    for field, value in (("kind", kind), ("apiVersion", api_version)):
        if value is not None and not isinstance(value, str):
            raise ManifestError(f"{where}: {field}: expected a string, got {_render(value)}")
    if expected is not None:
        entry = _BY_CLASS[expected]
        if kind and kind != entry.kind:
            raise ManifestError(f'{where}: kind: expected "{entry.kind}", got "{kind}"')
        if api_version and api_version != entry.api_version:
            raise ManifestError(
                f"{where} ({_label(data, entry.kind, entry.namespaced)}): apiVersion: expected "
                f'"{entry.api_version}" for a {entry.kind}, got "{api_version}"'
            )
        return _convert(data, entry, where)
    if not kind and default is not None:
        api_version, kind = api_version or default[0], default[1]
    if not kind:
        raise ManifestError(
            f"{where}: kind: Required value: every manifest needs apiVersion and kind"
        )
    if not api_version:
        raise ManifestError(
            f"{where} ({_label(data, kind, False)}): apiVersion: Required value: "
            "every manifest needs apiVersion and kind"
        )
    found = _BY_GVK.get((api_version, kind))
    if found is None:
        check_object(data, api_version, kind, f"{where} ({_label(data, kind, False)})")
        meta = data.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        namespace, name = meta.get("namespace"), meta.get("name")
        return UnknownObject(
            api_version=api_version,
            kind=kind,
            namespace=namespace if isinstance(namespace, str) else "",
            name=name if isinstance(name, str) else "",
            raw=data,
        )
    return _convert(data, found, where)


def _convert(data: dict[str, Any], entry: _Kind, where: str) -> Object:
    try:
        obj = msgspec.convert(data, entry.cls)
    except msgspec.ValidationError:
        # Rare: a null that means "unset", a non-string key, or a real mistake. Redo it with
        # the data cleaned the way the API server's decoder sees it, and explain what remains.
        cleaned = _clean(data, _type_info(entry.cls))
        try:
            obj = msgspec.convert(cleaned, entry.cls)
        except msgspec.ValidationError as err:
            label = _label(data, entry.kind, entry.namespaced)
            raise ManifestError(f"{where} ({label}): {_explain(err, cleaned)}") from err
    check_object(
        data,
        entry.api_version,
        entry.kind,
        f"{where} ({_label(data, entry.kind, entry.namespaced)})",
    )
    return _defaulted(obj, entry) if entry.namespaced else obj


def _where(where: str, obj: Any, entry: _Kind) -> str:
    """``where`` and the object's label, as ``_label`` names it from the raw data."""
    meta = obj.metadata
    if not meta.name:
        return f"{where} ({entry.kind})"
    if entry.namespaced:
        return f"{where} ({entry.kind} {meta.namespace}/{meta.name})"
    return f"{where} ({entry.kind} {meta.name})"


def _defaulted(obj: Any, entry: _Kind) -> Object:
    meta = obj.metadata
    if meta.namespace:
        result: Object = obj
        return result
    replaced: Object = msgspec.structs.replace(
        obj, metadata=msgspec.structs.replace(meta, namespace="default")
    )
    return replaced


def _label(data: dict[str, Any], kind: str, namespaced: bool) -> str:
    """``Pod default/web-1`` or ``Node n1``, as far as the raw data tells."""
    meta = data.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    name = meta.get("name")
    name = name if isinstance(name, str) else ""
    namespace = meta.get("namespace")
    namespace = namespace if isinstance(namespace, str) else ""
    if namespaced:
        namespace = namespace or "default"
    if not name:
        return kind
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


# ---------------------------------------------------------------------------------------------
# The slow path: JSON null semantics, then an error message naming the field

_TYPE_INFO: dict[type[msgspec.Struct], mi.Type] = {}


def _type_info(cls: type[msgspec.Struct]) -> mi.Type:
    info = _TYPE_INFO.get(cls)
    if info is None:
        info = _TYPE_INFO[cls] = mi.type_info(cls)
    return info


def _nullable(info: mi.Type) -> bool:
    return isinstance(info, mi.NoneType) or (
        isinstance(info, mi.UnionType) and any(isinstance(x, mi.NoneType) for x in info.types)
    )


def _zero(info: mi.Type) -> Any:
    """What encoding/json leaves in a map value or list item that was null: the zero value."""
    if _nullable(info) or isinstance(info, mi.AnyType):
        return None
    if isinstance(info, mi.UnionType):
        # A quantity (str | int | float): resource.Quantity decodes null as zero.
        if any(isinstance(x, mi.IntType) for x in info.types):
            return 0
        info = info.types[0]
    if isinstance(info, mi.StrType):
        return ""
    if isinstance(info, mi.BoolType):
        return False
    if isinstance(info, mi.IntType | mi.FloatType):
        return 0
    if isinstance(info, mi.ListType):
        return []
    return {}


def _json_key(key: Any) -> Any:
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return _go_float32_g(key)
    return key


def _clean(value: Any, info: mi.Type) -> Any:
    """``value`` as Go's decoder treats it for ``info``: null fields unset, keys strings."""
    if isinstance(info, mi.UnionType):
        concrete = [x for x in info.types if not isinstance(x, mi.NoneType)]
        return _clean(value, concrete[0]) if len(concrete) == 1 else value
    if isinstance(info, mi.StructType):
        if not isinstance(value, dict):
            return value
        fields = {f.encode_name: f.type for f in info.fields}
        struct_out: dict[Any, Any] = {}
        for k, v in value.items():
            k = _json_key(k)
            field_type = fields.get(k)
            if field_type is None:
                continue  # unknown fields are ignored, as the API server's decoder drops them
            if v is None:
                if _nullable(field_type):
                    struct_out[k] = None
                continue  # null leaves a non-pointer field at its zero value
            struct_out[k] = _clean(v, field_type)
        return struct_out
    if isinstance(info, mi.DictType):
        if not isinstance(value, dict):
            return value
        item = info.value_type
        return {
            _json_key(k): _zero(item) if v is None else _clean(v, item) for k, v in value.items()
        }
    if isinstance(info, mi.ListType):
        if not isinstance(value, list):
            return value
        item = info.item_type
        return [_zero(item) if v is None else _clean(v, item) for v in value]
    if isinstance(info, mi.AnyType):
        return _json_keys_deep(value)
    return value


def _json_keys_deep(value: Any) -> Any:
    if isinstance(value, dict):
        return {_json_key(k): _json_keys_deep(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_keys_deep(v) for v in value]
    return value


_ERROR: Final = re.compile(r"(?P<message>.*?)(?: - at `(?P<path>[^`]*)`(?: in `(?P<in>[^`]*)`)?)?")
_EXPECTED: Final = re.compile(r"Expected `(?P<expected>[^`]*)`, got `(?P<got>[^`]*)`")
_SEGMENT: Final = re.compile(r"\.([^.\[]+)|\[(\d+)\]|\[\.\.\.\]")
_TYPE_WORDS: Final = {
    "int": "an integer",
    "float": "a number",
    "str": "a string",
    "bool": "a boolean",
    "object": "a mapping",
    "array": "a list",
}


_SCALARS: Final = frozenset({"bool", "int", "float"})


def _msgspec_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    return "array" if isinstance(value, list) else "object"


def _explain(err: msgspec.ValidationError, data: Any) -> str:
    """msgspec's ``Expected `int`, got `str` - at `$.spec.x[0].y``` as a Kubernetes field error."""
    m = _ERROR.fullmatch(str(err))
    assert m is not None  # the pattern matches any text
    message, path, key_in = m.group("message"), m.group("path"), m.group("in")
    if path == "key" and key_in is not None:
        return f"{_field_path(key_in)}: map keys must be strings"
    expected = _EXPECTED.fullmatch(message)
    if path is None:
        return message
    if expected is None:
        return f"{_field_path(path)}: {message[:1].lower()}{message[1:]}"
    got = expected.group("got")
    names = [n.strip() for n in expected.group("expected").split("|")]
    if "float" in names and "int" in names:
        names.remove("int")
    words = [_TYPE_WORDS.get(n, n) for n in names if n != "null"]
    want = " or ".join(dict.fromkeys(words))
    found = _find(path, data, got)
    field = _field_path(path) if found is None else found[0]
    shown = _render(found[1]) if found is not None else f"a value of type {got}"
    hint = " (quote it to keep it a string)" if "str" in names and got in _SCALARS else ""
    return f"{field}: expected {want}, got {shown}{hint}"


def _segments(path: str) -> list[str | int | None]:
    """``$.spec.a[0].b[...]`` as ``["spec", "a", 0, "b", None]``; None is some map key."""
    return [
        name if name else (int(index) if index else None)
        for name, index in _SEGMENT.findall(path.removeprefix("$"))
    ]


def _find(path: str, data: Any, got: str) -> tuple[str, Any] | None:
    """The Kubernetes-style path and value of the first value of type ``got`` at ``path``."""

    def search(value: Any, rest: list[str | int | None], shown: str) -> tuple[str, Any] | None:
        if not rest:
            return (shown, value) if _msgspec_type(value) == got else None
        step, tail = rest[0], rest[1:]
        if isinstance(step, int):
            if isinstance(value, list) and step < len(value):
                return search(value[step], tail, f"{shown}[{step}]")
            return None
        if not isinstance(value, dict):
            return None
        if step is None:
            for k, v in value.items():
                found = search(v, tail, f"{shown}[{k}]")
                if found is not None:
                    return found
            return None
        if step not in value:
            return None
        return search(value[step], tail, f"{shown}.{step}" if shown else step)

    return search(data, _segments(path), "")


def _field_path(path: str) -> str:
    shown = ""
    for step in _segments(path):
        if isinstance(step, int):
            shown += f"[{step}]"
        elif step is None:
            shown += "[*]"
        else:
            shown += f".{step}" if shown else step
    return shown


def _render(value: Any) -> str:
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= 60 else text[:56] + '..."'
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return "a list" if isinstance(value, list) else "a mapping"


__all__ = [
    "Object",
    "UnknownObject",
    "decode_manifests",
    "decode_object",
    "load_manifests",
    "load_text",
    "read_yaml_documents",
    "register_kind",
]
