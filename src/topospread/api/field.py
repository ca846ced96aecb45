"""Field paths and field errors that print exactly as apimachinery's ``field.Error`` does.

A :class:`FieldError` renders as ``<path>: <type>[: <value>][: <detail>]``. How the bad value is
printed depends on its Go type, and the API server's internal types make the choice visible:

- a plain Go ``string`` is printed with ``%q`` (:func:`go_quote`);
- ``int32``/``int64``/``bool``/floats with ``%v``;
- everything else — named string types such as ``TaintEffect`` or
  ``UnsatisfiableConstraintAction``, pointers, slices, structs, Go ``int`` — is marshalled with
  ``encoding/json`` (:func:`go_json`); a nil pointer prints ``null``.

Python ``str``, ``int`` and ``bool`` bad values are taken to be Go ``string``, ``int64`` and
``bool``; wrap any other value in :class:`GoJSON` to have it printed as ``encoding/json`` would.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final, TypeAlias


class ErrorType(StrEnum):
    """field.ErrorType, valued as upstream values it (the machine-readable cause type)."""

    NOT_FOUND = "FieldValueNotFound"
    REQUIRED = "FieldValueRequired"
    DUPLICATE = "FieldValueDuplicate"
    INVALID = "FieldValueInvalid"
    NOT_SUPPORTED = "FieldValueNotSupported"
    FORBIDDEN = "FieldValueForbidden"
    TOO_LONG = "FieldValueTooLong"
    TOO_MANY = "FieldValueTooMany"
    INTERNAL = "InternalError"
    TYPE_INVALID = "FieldValueTypeInvalid"

    @property
    def text(self) -> str:
        """Upstream: ErrorType.String (apimachinery/pkg/util/validation/field/errors.go, v1.35)"""
        return _TYPE_TEXT[self]


_TYPE_TEXT: Final[Mapping[ErrorType, str]] = {
    ErrorType.NOT_FOUND: "Not found",
    ErrorType.REQUIRED: "Required value",
    ErrorType.DUPLICATE: "Duplicate value",
    ErrorType.INVALID: "Invalid value",
    ErrorType.NOT_SUPPORTED: "Unsupported value",
    ErrorType.FORBIDDEN: "Forbidden",
    ErrorType.TOO_LONG: "Too long",
    ErrorType.TOO_MANY: "Too many",
    ErrorType.INTERNAL: "Internal error",
    ErrorType.TYPE_INVALID: "Invalid value",
}

# Error types whose body never shows the bad value.
_VALUELESS: Final = frozenset(
    {ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.TOO_LONG, ErrorType.INTERNAL}
)


# ---------------------------------------------------------------------------------------------
# Go value formatting


def go_quote(value: str) -> str:
    """Go's ``strconv.Quote`` (``%q`` of a string): printable runes kept, the rest escaped.

    Python's ``str.isprintable`` and Go's ``unicode.IsPrint`` draw the same line: letters, marks,
    numbers, punctuation, symbols and the ASCII space.
    """
    out = ['"']
    for ch in value:
        code = ord(ch)
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        elif ch in _GO_SHORT_ESCAPES:
            out.append(_GO_SHORT_ESCAPES[ch])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\\ufffd")  # not a valid rune: Go prints the replacement character
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


_GO_SHORT_ESCAPES: Final[Mapping[str, str]] = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
}

# encoding/json escapes HTML-significant characters and the two JavaScript line separators.
_JSON_EXTRA_ESCAPES: Final[Mapping[str, str]] = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def _json_string(value: str) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return "".join(_JSON_EXTRA_ESCAPES.get(ch, ch) for ch in text)


JSONable: TypeAlias = (
    "str | int | float | bool | Sequence[JSONable] | Mapping[str, JSONable] | None"
)


def go_json(value: JSONable) -> str:
    """Go's ``json.Marshal`` of ``value``: compact, map keys sorted, HTML characters escaped.

    Mappings stand for Go maps and structs alike; give struct fields in declaration order (Go
    sorts only map keys) — a ``dict`` keeps its insertion order here.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return json.dumps(value)
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, Mapping):
        items = ",".join(f"{_json_string(k)}:{go_json(v)}" for k, v in value.items())
        return "{" + items + "}"
    return "[" + ",".join(go_json(v) for v in value) + "]"


@dataclass(frozen=True, slots=True)
class GoJSON:
    """A bad value that upstream prints with ``encoding/json``.

    Use it for named string types (``TaintEffect``, ``NodeInclusionPolicy``...), pointers (the
    pointee, or ``None`` for nil), slices, structs and Go ``int``.
    """

    value: JSONable


class _Omitted:
    """The bad value of ``TooMany`` with an unknown count: the body shows only the type."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "OMIT_VALUE"


OMIT_VALUE: Final = _Omitted()

BadValue: TypeAlias = "str | int | float | bool | GoJSON | _Omitted | None"


def render_value(value: BadValue) -> str:
    """A bad value as field.Error prints it (see the module docstring)."""
    if isinstance(value, GoJSON):
        return go_json(value.value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return go_quote(value)
    return "null"


# ---------------------------------------------------------------------------------------------
# Paths


class Path:
    """field.Path: a root name followed by ``.child`` names and ``[index]``/``[key]`` subscripts.

    Each step links to its parent, so that validation builds the path of every field it visits
    in constant time; the text is made only when an error is printed.
    """

    __slots__ = ("_parent", "_subscript", "_text")

    def __init__(self, parent: Path | None, subscript: bool, text: str | None) -> None:
        self._parent = parent
        self._subscript = subscript
        self._text = text

    @classmethod
    def nil(cls) -> Path:
        """A path with no steps: its first index prints as ``[0]``."""
        return cls(None, False, None)

    @classmethod
    def root(cls, name: str, *more: str) -> Path:
        """Upstream: NewPath (apimachinery/pkg/util/validation/field/path.go, v1.35)"""
        return cls(None, False, name).child(*more)

    def child(self, *names: str) -> Path:
        """Upstream: Path.Child (apimachinery/pkg/util/validation/field/path.go, v1.35)"""
        path = self
        for name in names:
            path = Path(path, False, name)
        return path

    def index(self, i: int) -> Path:
        """Upstream: Path.Index (apimachinery/pkg/util/validation/field/path.go, v1.35)"""
        return Path(self, True, str(i))

    def key(self, k: str) -> Path:
        """A map key subscript, printed unquoted: ``metadata.labels[app]``.

        Upstream: Path.Key (apimachinery/pkg/util/validation/field/path.go, v1.35)
        """
        return Path(self, True, k)

    def _steps(self) -> list[tuple[bool, str]]:
        steps: list[tuple[bool, str]] = []
        path: Path | None = self
        while path is not None:
            if path._text is not None:
                steps.append((path._subscript, path._text))
            path = path._parent
        steps.reverse()
        return steps

    def __str__(self) -> str:
        """Upstream: Path.String (apimachinery/pkg/util/validation/field/path.go, v1.35)"""
        out: list[str] = []
        for i, (subscript, text) in enumerate(self._steps()):
            if subscript or not text:
                out.append(f"[{text}]")
            else:
                out.append(("." if i else "") + text)
        return "".join(out)

    def __repr__(self) -> str:
        return f"Path({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Path) and self._steps() == other._steps()

    def __hash__(self) -> int:
        return hash(tuple(self._steps()))


def as_path(path: Path | str) -> Path:
    """A ready path, or a root name used verbatim (e.g. ``profiles[0].pluginConfig[1].args``)."""
    return path if isinstance(path, Path) else Path.root(path)


# ---------------------------------------------------------------------------------------------
# Errors


@dataclass(frozen=True, slots=True)
class FieldError:
    """One validation failure; ``str()`` is upstream's ``field.Error.Error()`` byte for byte."""

    type: ErrorType
    field: str
    bad_value: BadValue
    detail: str = ""

    def body(self) -> str:
        """The message without the field path.

        Upstream: Error.ErrorBody (apimachinery/pkg/util/validation/field/errors.go, v1.35)
        """
        if self.type in _VALUELESS or self.bad_value is OMIT_VALUE:
            text = self.type.text
        else:
            text = f"{self.type.text}: {render_value(self.bad_value)}"
        if self.detail:
            text += f": {self.detail}"
        return text

    def __str__(self) -> str:
        """Upstream: Error.Error (apimachinery/pkg/util/validation/field/errors.go, v1.35)"""
        return f"{self.field}: {self.body()}"


def invalid(path: Path, value: BadValue, detail: str) -> FieldError:
    """Upstream: field.Invalid (apimachinery/pkg/util/validation/field/errors.go, v1.35)"""
    return FieldError(ErrorType.INVALID, str(path), value, detail)


def required(path: Path, detail: str = "") -> FieldError:
    """Upstream: field.Required (apimachinery/pkg/util/validation/field/errors.go, v1.35)"""
    return FieldError(ErrorType.REQUIRED, str(path), "", detail)


def forbidden(path: Path, detail: str) -> FieldError:
    """Upstream: field.Forbidden (apimachinery/pkg/util/validation/field/errors.go, v1.35)"""
    return FieldError(ErrorType.FORBIDDEN, str(path), "", detail)


def duplicate(path: Path, value: BadValue, detail: str = "") -> FieldError:
    """``detail`` is empty upstream except where a caller overwrites it (duplicate taints).

    Upstream: field.Duplicate (apimachinery/pkg/util/validation/field/errors.go, v1.35)
    """
    return FieldError(ErrorType.DUPLICATE, str(path), value, detail)


def not_supported(path: Path, value: BadValue, valid_values: Iterable[str]) -> FieldError:
    """``valid_values`` are printed in the order given, each ``%q``-quoted.

    Upstream: field.NotSupported (apimachinery/pkg/util/validation/field/errors.go, v1.35)
    """
    quoted = [go_quote(v) for v in valid_values]
    detail = "supported values: " + ", ".join(quoted) if quoted else ""
    return FieldError(ErrorType.NOT_SUPPORTED, str(path), value, detail)


def not_found(path: Path, value: BadValue) -> FieldError:
    """Upstream: field.NotFound (apimachinery/pkg/util/validation/field/errors.go, v1.35)"""
    return FieldError(ErrorType.NOT_FOUND, str(path), value)


def too_long(path: Path, max_length: int) -> FieldError:
    """The value itself is never shown.

    Upstream: field.TooLong (apimachinery/pkg/util/validation/field/errors.go, v1.35)
    """
    if max_length >= 0:
        unit = "byte" if max_length == 1 else "bytes"
        detail = f"may not be more than {max_length} {unit}"
    else:
        detail = "value is too long"
    return FieldError(ErrorType.TOO_LONG, str(path), "<value omitted>", detail)


def too_many(path: Path, actual: int, max_quantity: int) -> FieldError:
    """Upstream: field.TooMany (apimachinery/pkg/util/validation/field/errors.go, v1.35)"""
    if max_quantity >= 0:
        unit = "item" if max_quantity == 1 else "items"
        detail = f"must have at most {max_quantity} {unit}"
    else:
        detail = "has too many items"
    value: BadValue = GoJSON(actual) if actual >= 0 else OMIT_VALUE
    return FieldError(ErrorType.TOO_MANY, str(path), value, detail)


def internal_error(path: Path, message: str) -> FieldError:
    """Upstream: field.InternalError (apimachinery/pkg/util/validation/field/errors.go, v1.35)"""
    return FieldError(ErrorType.INTERNAL, str(path), None, message)


def dedupe(errors: Iterable[FieldError]) -> list[FieldError]:
    """Drop errors whose text repeats an earlier one, keeping order.

    Upstream: ErrorList.ToAggregate (apimachinery/pkg/util/validation/field/errors.go, v1.35)
    """
    seen: set[str] = set()
    out: list[FieldError] = []
    for err in errors:
        text = str(err)
        if text not in seen:
            seen.add(text)
            out.append(err)
    return out


def aggregate_message(errors: Sequence[FieldError]) -> str:
    """The text of ``ErrorList.ToAggregate().Error()``: one message, or ``[a, b, ...]``.

    Upstream: aggregate.Error (apimachinery/pkg/util/errors/errors.go, v1.35)
    """
    msgs = [str(e) for e in dedupe(errors)]
    if len(msgs) == 1:
        return msgs[0]
    return "[" + ", ".join(msgs) + "]"
