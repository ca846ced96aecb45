"""JSON held in an annotation, decoded as Go's ``encoding/json`` decodes it, errors included.

A few annotations hold JSON that the API server decodes with ``json.Unmarshal`` before it
validates the result (a node's ``scheduler.alpha.kubernetes.io/preferAvoidPods``, a pod's
``scheduler.alpha.kubernetes.io/tolerations``); when that fails, the error's text is the
validation message. So this module says what Go says:

- a syntax error, found by a scan of the whole text before anything is decoded
  (``invalid character 'x' looking for beginning of value``, ``unexpected end of JSON input``);
- else the first value of the wrong JSON type (``json: cannot unmarshal string into Go struct
  field PreferAvoidPodsEntry.preferAvoidPods.podSignature of type v1.PodSignature``), Go going
  on past it, unless a type with its own UnmarshalJSON (a metav1.Time) fails, which ends the
  decode and is the error returned.

Keys match a struct's fields exactly or else without regard to ASCII case; unknown keys are
skipped; ``null`` leaves a value as it is (a pointer or a slice becomes nil).

Upstream: checkValid, scanner's states, quoteChar (encoding/json scanner.go); decodeState's
object, array, literalStore and addErrorContext (encoding/json decode.go), Go 1.25, as
kube-apiserver v1.35 is built; metav1.Time.UnmarshalJSON (k8s.io/apimachinery, v1.35).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from topospread.api.field import go_quote
from topospread.api.go_values import go_time_error

UNEXPECTED_END: Final = "unexpected end of JSON input"
_SPACE: Final = frozenset(b" \t\r\n")
_DIGITS: Final = frozenset(b"0123456789")
_HEX: Final = frozenset(b"0123456789abcdefABCDEF")
_ESCAPES: Final = frozenset(b'bfnrt\\/"')
# The parse stack's entries (scanner.go's parseObjectKey, parseObjectValue, parseArrayValue).
_KEY, _VALUE, _ARRAY = 0, 1, 2


def _quote_char(c: int) -> str:
    """Upstream: quoteChar (encoding/json scanner.go)"""
    if c == ord("'"):
        return "'\\''"
    if c == ord('"'):
        return "'\"'"
    return "'" + go_quote(chr(c))[1:-1] + "'"


class _Scanner:
    """Go's JSON scanner: one state per step, a stack of the objects and arrays open."""

    def __init__(self) -> None:
        self.state: Callable[[int], str | None] = self._begin_value
        self.stack: list[int] = []
        self.end_top = False

    @staticmethod
    def _error(c: int, context: str) -> str:
        return f"invalid character {_quote_char(c)} {context}"

    def _begin_value_or_empty(self, c: int) -> str | None:
        if c in _SPACE:
            return None
        if c == ord("]"):
            return self._end_value(c)
        return self._begin_value(c)

    def _begin_value(self, c: int) -> str | None:
        if c in _SPACE:
            return None
        if c == ord("{"):
            self.stack.append(_KEY)
            self.state = self._begin_string_or_empty
        elif c == ord("["):
            self.stack.append(_ARRAY)
            self.state = self._begin_value_or_empty
        elif c == ord('"'):
            self.state = self._in_string
        elif c == ord("-"):
            self.state = self._neg
        elif c == ord("0"):
            self.state = self._zero
        elif c in _DIGITS:
            self.state = self._digits
        elif c in _LITERALS:
            self.state = self._literal(_LITERALS[c], 1)
        else:
            return self._error(c, "looking for beginning of value")
        return None

    def _begin_string_or_empty(self, c: int) -> str | None:
        if c in _SPACE:
            return None
        if c == ord("}"):
            self.stack[-1] = _VALUE
            return self._end_value(c)
        return self._begin_string(c)

    def _begin_string(self, c: int) -> str | None:
        if c in _SPACE:
            return None
        if c == ord('"'):
            self.state = self._in_string
            return None
        return self._error(c, "looking for beginning of object key string")

    def _pop(self) -> None:
        self.stack.pop()
        if self.stack:
            self.state = self._end_value
        else:
            self.state = self._end_top
            self.end_top = True

    def _end_value(self, c: int) -> str | None:
        if not self.stack:
            self.state = self._end_top
            self.end_top = True
            return self._end_top(c)
        if c in _SPACE:
            self.state = self._end_value
            return None
        top = self.stack[-1]
        if top == _KEY:
            if c == ord(":"):
                self.stack[-1] = _VALUE
                self.state = self._begin_value
                return None
            return self._error(c, "after object key")
        if top == _VALUE:
            if c == ord(","):
                self.stack[-1] = _KEY
                self.state = self._begin_string
                return None
            if c == ord("}"):
                self._pop()
                return None
            return self._error(c, "after object key:value pair")
        if c == ord(","):
            self.state = self._begin_value
            return None
        if c == ord("]"):
            self._pop()
            return None
        return self._error(c, "after array element")

    def _end_top(self, c: int) -> str | None:
        return None if c in _SPACE else self._error(c, "after top-level value")

    def _in_string(self, c: int) -> str | None:
        if c == ord('"'):
            self.state = self._end_value
        elif c == ord("\\"):
            self.state = self._in_escape
        elif c < 0x20:
            return self._error(c, "in string literal")
        return None

    def _in_escape(self, c: int) -> str | None:
        if c in _ESCAPES:
            self.state = self._in_string
        elif c == ord("u"):
            self.state = self._hex(4)
        else:
            return self._error(c, "in string escape code")
        return None

    def _hex(self, left: int) -> Callable[[int], str | None]:
        def step(c: int) -> str | None:
            if c not in _HEX:
                return self._error(c, "in \\u hexadecimal character escape")
            self.state = self._in_string if left == 1 else self._hex(left - 1)
            return None

        return step

    def _neg(self, c: int) -> str | None:
        if c == ord("0"):
            self.state = self._zero
        elif c in _DIGITS:
            self.state = self._digits
        else:
            return self._error(c, "in numeric literal")
        return None

    def _digits(self, c: int) -> str | None:
        return None if c in _DIGITS else self._zero(c)

    def _zero(self, c: int) -> str | None:
        if c == ord("."):
            self.state = self._dot
            return None
        if c in b"eE":
            self.state = self._exp
            return None
        return self._end_value(c)

    def _dot(self, c: int) -> str | None:
        if c in _DIGITS:
            self.state = self._dot_digits
            return None
        return self._error(c, "after decimal point in numeric literal")

    def _dot_digits(self, c: int) -> str | None:
        if c in _DIGITS:
            return None
        if c in b"eE":
            self.state = self._exp
            return None
        return self._end_value(c)

    def _exp(self, c: int) -> str | None:
        if c in b"+-":
            self.state = self._exp_sign
            return None
        return self._exp_sign(c)

    def _exp_sign(self, c: int) -> str | None:
        if c in _DIGITS:
            self.state = self._exp_digits
            return None
        return self._error(c, "in exponent of numeric literal")

    def _exp_digits(self, c: int) -> str | None:
        return None if c in _DIGITS else self._end_value(c)

    def _literal(self, word: str, at: int) -> Callable[[int], str | None]:
        def step(c: int) -> str | None:
            if c != ord(word[at]):
                return self._error(c, f"in literal {word} (expecting {_quote_char(ord(word[at]))})")
            self.state = self._end_value if at + 1 == len(word) else self._literal(word, at + 1)
            return None

        return step

    def eof(self) -> str | None:
        if self.end_top:
            return None
        said = self.state(ord(" "))
        if said is not None:
            return said
        return None if self.end_top else UNEXPECTED_END


_LITERALS: Final = {ord("t"): "true", ord("f"): "false", ord("n"): "null"}


def syntax_error(data: bytes) -> str | None:
    """Go's error for ``data`` that is not one JSON value, None if it is.

    Upstream: checkValid (encoding/json scanner.go)
    """
    scanner = _Scanner()
    for c in data:
        said = scanner.state(c)
        if said is not None:
            return said
    return scanner.eof()


# ---------------------------------------------------------------------------------------------
# Decoding into Go types


@dataclass(frozen=True, slots=True)
class GoScalar:
    """A string, bool or int64 kind; ``name`` its Go type (``string``, ``types.UID``)."""

    name: str
    kind: str


@dataclass(frozen=True, slots=True)
class GoPointer:
    """A pointer: ``null`` makes it nil; errors name the type it points to."""

    elem: GoType


@dataclass(frozen=True, slots=True)
class GoSlice:
    name: str
    elem: GoType


@dataclass(frozen=True, slots=True)
class GoStruct:
    """A struct named ``package.Name``, its fields by JSON name."""

    name: str
    fields: Mapping[str, GoType]


@dataclass(frozen=True, slots=True)
class GoTime:
    """metav1.Time: its own UnmarshalJSON (a string parsed as RFC 3339, or null)."""


GoType = GoScalar | GoPointer | GoSlice | GoStruct | GoTime

STRING: Final = GoScalar("string", "string")
BOOL: Final = GoScalar("bool", "bool")
INT64: Final = GoScalar("int64", "int")
TIME: Final = GoTime()


@dataclass(frozen=True, slots=True)
class _Number:
    literal: str


class _Pairs(list[tuple[str, Any]]):
    """An object's members in order, duplicates kept (Go decodes each in turn)."""


class _Fatal(Exception):
    """An UnmarshalJSON error: it ends the decode."""


_INTEGER: Final = re.compile(r"-?[0-9]+")
_INT64: Final = (-(2**63), 2**63 - 1)


def _kind(value: Any) -> str:
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, _Number):
        return "number"
    return "object" if isinstance(value, _Pairs) else "array"


class _Decoder:
    def __init__(self) -> None:
        self.saved: str | None = None
        self.struct: str | None = None
        self.fields: list[str] = []

    def _type_error(self, got: str, type_name: str) -> str:
        if self.struct is not None or self.fields:
            where = f"Go struct field {self.struct or ''}.{'.'.join(self.fields)}"
        else:
            where = "Go value"
        return f"json: cannot unmarshal {got} into {where} of type {type_name}"

    def _save(self, got: str, type_name: str) -> None:
        if self.saved is None:
            self.saved = self._type_error(got, type_name)

    def value(self, value: Any, into: GoType, current: Any) -> Any:
        """``value`` decoded into a ``into`` holding ``current``: what it holds after."""
        if isinstance(into, GoTime):
            if value is None:
                return None
            if not isinstance(value, str):
                raise _Fatal(self._type_error(_kind(value), "string"))
            said = go_time_error(value)
            if said is not None:
                raise _Fatal(said)
            return value
        if value is None:
            return None if isinstance(into, (GoPointer, GoSlice)) else current
        if isinstance(into, GoPointer):
            return self.value(value, into.elem, current)
        if isinstance(into, GoStruct):
            if not isinstance(value, _Pairs):
                self._save(_kind(value), into.name)
                return current
            return self._struct(value, into, current)
        if isinstance(into, GoSlice):
            if not isinstance(value, list) or isinstance(value, _Pairs):
                self._save(_kind(value), into.name)
                return current
            # Go decodes into the elements a slice holds already (a key given twice).
            old = current if isinstance(current, list) else []
            return [
                self.value(item, into.elem, old[i] if i < len(old) else None)
                for i, item in enumerate(value)
            ]
        got = _kind(value)
        if into.kind == "int" and got == "number":
            literal = value.literal
            if _INTEGER.fullmatch(literal) and _INT64[0] <= int(literal) <= _INT64[1]:
                return int(literal)
            self._save(f"number {literal}", into.name)
            return current
        if got != into.kind:
            self._save(got, into.name)
            return current
        return value

    def _struct(self, pairs: _Pairs, into: GoStruct, current: Any) -> dict[str, Any]:
        out: dict[str, Any] = dict(current) if isinstance(current, dict) else {}
        struct, depth = self.struct, len(self.fields)
        folded = {name.lower(): name for name in reversed(list(into.fields))}
        for key, item in pairs:
            name = key if key in into.fields else folded.get(key.lower())
            if name is None:
                continue
            self.fields.append(name)
            self.struct = into.name.rpartition(".")[2]
            out[name] = self.value(item, into.fields[name], out.get(name))
            del self.fields[depth:]
            self.struct = struct
        return out


def go_unmarshal(text: str, into: GoType) -> tuple[Any, str | None]:
    """``text`` decoded into ``into``: the value (structs as dicts of the fields given, by
    JSON name), and Go's error or None.

    Upstream: json.Unmarshal (encoding/json decode.go)
    """
    said = syntax_error(text.encode("utf-8", "surrogatepass"))
    if said is not None:
        return None, said
    data = json.loads(
        text,
        object_pairs_hook=_Pairs,
        parse_int=_Number,
        parse_float=_Number,
    )
    decoder = _Decoder()
    try:
        value = decoder.value(data, into, None)
    except _Fatal as err:
        return None, str(err)
    return value, decoder.saved
