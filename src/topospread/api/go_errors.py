"""A value of the wrong JSON type, told as the API server's JSON decoder tells it.

The API server (sigs.k8s.io/json, a fork of Go's encoding/json) answers a body whose value has
the wrong JSON type with Go's ``UnmarshalTypeError``::

    json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type
    int32

(one line), which ``kubectl apply`` shows after ``Deployment in version "v1" cannot be handled
as a Deployment: ``; here our prefix naming the file and the object stands in for that, as for
the strict decoding errors.

``Struct`` is the Go struct holding the field, the field path is every JSON field name from
the root (list indices and map keys are not in it), the value is ``string``, ``bool``,
``array``, ``object`` or ``number`` (``number 1.5``, the literal, when the field is an
integer), and the type is the Go type (``int32`` also for ``*int32``). kubectl sends JSON it
re-encoded, so a number's literal is Go's encoding of the float64 or int64 it read.

Types with their own UnmarshalJSON differ: an IntOrString decodes a non-string with Go's
decoder into its int32 (``... of type int32``, the outer field named), a metav1.Time, MicroTime
or Duration decodes into a string (``... of type string``) and then parses it, failing with Go's
time error as it is (go_values), a resource.Quantity fails to parse with apimachinery's message
(given the field's path and value here, as resource_validation does), and a ``[]byte`` that is
not base64 is ``illegal base64 data at input byte N``.

The walk serves our typed structs (the Go types in go_types) and the strict decode's structs,
which type every field of every built-in kind from the Go sources (strict.go_fields).

Go keeps decoding after a type error and reports the first one (in the order kubectl sends the
fields: sorted), unless a type's own UnmarshalJSON fails later (a quantity, an IntOrString, a
time), which wins; msgspec stops at the first wrong value in the file's order, so once it has
failed ``go_first_error`` walks the data as Go's decoder does to name the same one. (Only on
that error path: a clean decode costs nothing more.)

Upstream: UnmarshalTypeError.Error and decodeState.addErrorContext (encoding/json decode.go,
as vendored in sigs.k8s.io/json), IntOrString.UnmarshalJSON, Time.UnmarshalJSON and
Quantity.UnmarshalJSON (k8s.io/apimachinery, v1.35).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

import msgspec
import msgspec.inspect as mi

from topospread.api.decode_errors import msgspec_type, render, type_info
from topospread.api.go_types import (
    BYTES,
    DICT_STRUCTS,
    DURATION,
    INT_OR_STRING,
    MICRO_TIME,
    QUANTITY,
    TIME,
    element_go_type,
    field_go_type,
    go_struct_name,
    unwrap,
)
from topospread.api.go_values import (
    RFC3339,
    RFC3339_MICRO,
    go_base64_error,
    go_duration_error,
    go_time_error,
)
from topospread.api.resource import ERR_FORMAT_WRONG, QuantityError, parse_quantity

_ERROR: Final = re.compile(r"(?P<message>.*?) - at `(?P<path>\$[^`]*)`")
_EXPECTED: Final = re.compile(r"Expected `[^`]*`, got `(?P<got>[^`]*)`")
_BOUND: Final = re.compile(r"Expected `int` (?:>=|<=) -?[0-9]+")
_SEGMENT: Final = re.compile(r"\.([^.\[]+)|\[(\d+)\]|\[\.\.\.\]")
_INT32: Final = (-(2**31), 2**31 - 1)
_INTEGERS: Final = frozenset(
    {"int8", "int16", "int32", "int64", "int", "uint", "uint8", "uint16", "uint32", "uint64"}
)
# Types whose own UnmarshalJSON decides (an error of theirs stops the decoder).
_CUSTOM: Final = frozenset({QUANTITY, INT_OR_STRING, TIME, MICRO_TIME, DURATION})
# The ones that decode a JSON string with a Go parser: its error, as it says it.
_PARSERS: Final = {
    TIME: lambda text: go_time_error(text, RFC3339),
    MICRO_TIME: lambda text: go_time_error(text, RFC3339_MICRO),
    DURATION: go_duration_error,
}


def go_type_error(err: msgspec.ValidationError, data: Any, cls: type[msgspec.Struct]) -> str | None:
    """msgspec's type error for ``data`` decoded into ``cls`` in the API server's words, or None
    when the Go type of the field is not known for sure (the caller keeps its own wording).

    The error named is the one Go's decoder returns, found by walking ``data`` as it reads it
    (``go_first_error``); msgspec's own first error when that walk cannot name one."""
    if go_struct_name(cls) is None:
        return None
    said = go_first_error(data, cls)
    if said is not None:
        return said
    m = _ERROR.fullmatch(str(err))
    if m is None:
        return None
    message, path = m.group("message"), m.group("path")
    expected = _EXPECTED.fullmatch(message)
    if expected is not None:
        got = expected.group("got")
    elif _BOUND.fullmatch(message):
        got = "int"
    else:
        return None
    steps = _locate(_segments(path), data, got)
    return None if steps is None else _message_at(steps, data, cls)


@dataclass(frozen=True, slots=True)
class _At:
    """Where a walk from the root has got to: the type there and the names an error needs."""

    info: mi.Type
    go_type: str | None = None
    struct: str = ""
    fields: tuple[str, ...] = ()
    shown: str = ""  # the path as a field error names it: spec.containers[0].resources.limits[cpu]


def _step(at: _At, step: str | int) -> _At | None:
    """``at`` moved one step down (a field, a map key or a list index), or None if unknown."""
    info = unwrap(at.info)
    if isinstance(step, str) and isinstance(info, mi.StructType):
        field = next((f for f in info.fields if f.encode_name == step), None)
        if field is None:
            return None
        shown = f"{at.shown}.{step}" if at.shown else step
        return _At(
            field.type,
            field_go_type(info.cls, field),
            go_struct_name(info.cls) or "",
            (*at.fields, step),
            shown,
        )
    if isinstance(info, mi.DictType) and at.go_type in DICT_STRUCTS and isinstance(step, str):
        go_type = DICT_STRUCTS[at.go_type].get(step)
        struct = at.go_type.removeprefix("v1.")
        return _At(info.value_type, go_type, struct, (*at.fields, step), f"{at.shown}.{step}")
    if isinstance(info, mi.DictType | mi.ListType) and at.go_type is not None:
        inner = info.value_type if isinstance(info, mi.DictType) else info.item_type
        shown = f"{at.shown}[{step}]"
        if at.struct == "NodeStatus" and isinstance(step, str):
            # A node's capacity and allocatable: validateNodeResources names a resource with
            # Child (status.allocatable.cpu), and so does its error here.
            shown = f"{at.shown}.{step}"
        return _At(inner, element_go_type(at.go_type), at.struct, at.fields, shown)
    return None


def _message_at(steps: list[str | int], data: Any, cls: type[msgspec.Struct]) -> str | None:
    """The decoder's error for the value at ``steps``, or None when its Go type is unknown."""
    at: _At | None = _At(type_info(cls))
    value = data
    for step in steps:
        at = _step(at, step) if at is not None else None
        if at is None or at.go_type is None:
            return None
        value = value[step]
    if at is None or at.go_type is None or not at.fields:
        return None
    go_type = at.go_type
    if go_type == QUANTITY:
        return f"{at.shown}: Invalid value: {render(value)}: {_quantity_error(value)}"
    if go_type in _PARSERS and isinstance(value, str):
        return _PARSERS[go_type](value)
    if go_type == BYTES and isinstance(value, str):
        return go_base64_error(value)
    if go_type == INT_OR_STRING:
        go_type = "int32"  # a string is always taken: the error is its int32's
    elif go_type in _PARSERS:
        go_type = "string"  # UnmarshalJSON decodes a string first
    what = json_kind(value)
    if what == "number" and go_type in _INTEGERS:
        what = f"number {go_number(value)}"
    return (
        f"json: cannot unmarshal {what} into Go struct field "
        f"{at.struct}.{'.'.join(at.fields)} of type {go_type}"
    )


def json_kind(value: Any) -> str:
    """What encoding/json calls a decoded JSON value in an UnmarshalTypeError."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def go_number(value: int | float) -> str:
    """A number as Go's encoding/json writes a float64 or an int64 (kubectl re-encodes what it
    read): no exponent between 1e-6 and 1e21, else ``1e+21``, ``1e-07`` cleaned to ``1e-7``."""
    if isinstance(value, int) or not math.isfinite(value):
        return str(value)
    if value != 0 and (abs(value) < 1e-6 or abs(value) >= 1e21):
        return re.sub(r"e([+-])0(\d)$", r"e\1\2", repr(value))
    if value.is_integer():
        return str(int(value))
    return format(Decimal(repr(value)), "f")


def _segments(path: str) -> list[str | int | None]:
    """``$.spec.a[0].b[...]`` as ``["spec", "a", 0, "b", None]``; None is some map key."""
    return [
        name if name else (int(index) if index else None)
        for name, index in _SEGMENT.findall(path.removeprefix("$"))
    ]


def _locate(rest: list[str | int | None], value: Any, got: str) -> list[str | int] | None:
    """The concrete steps (map keys filled in) to the first value of msgspec type ``got``."""
    if not rest:
        return [] if msgspec_type(value) == got else None
    step, tail = rest[0], rest[1:]
    if isinstance(step, int):
        if isinstance(value, list) and step < len(value):
            found = _locate(tail, value[step], got)
            return None if found is None else [step, *found]
        return None
    if not isinstance(value, dict):
        return None
    if step is None:
        for key, item in value.items():
            found = _locate(tail, item, got)
            if found is not None:
                return [key, *found]
        return None
    if step not in value:
        return None
    found = _locate(tail, value[step], got)
    return None if found is None else [step, *found]


def _quantity_error(value: Any) -> str | None:
    """Quantity.UnmarshalJSON's error for a JSON value (a string or a number's literal is
    parsed), or None when it decodes."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return ERR_FORMAT_WRONG
    try:
        parse_quantity(value)
    except QuantityError as err:
        return str(err)
    return None


def _custom_fails(value: Any, go_type: str) -> bool:
    """Whether a type's own UnmarshalJSON refuses ``value``."""
    if go_type == QUANTITY:
        return _quantity_error(value) is not None
    if go_type in _PARSERS:
        return not isinstance(value, str) or _PARSERS[go_type](value) is not None
    # IntOrString: a string, else an int32.
    if isinstance(value, str):
        return False
    return (
        isinstance(value, bool) or not isinstance(value, int) or not _INT32[0] <= value <= _INT32[1]
    )


def _fits(value: Any, info: mi.Type) -> bool:
    """Whether a scalar of ``value``'s JSON type decodes into ``info`` (Go's plain kinds)."""
    if isinstance(info, mi.UnionType):
        return any(_fits(value, t) for t in info.types)
    if isinstance(info, mi.NoneType | mi.AnyType):
        return isinstance(info, mi.AnyType) or value is None
    if isinstance(info, mi.BoolType):
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if isinstance(info, mi.IntType):
        # kubectl re-encodes an integral float64 (2.0) as Go writes it (2): an int takes it.
        return (
            (isinstance(value, int) or (isinstance(value, float) and value.is_integer()))
            and (info.ge is None or value >= info.ge)
            and (info.le is None or value <= info.le)
        )
    if isinstance(info, mi.FloatType):
        return isinstance(value, int | float)
    if isinstance(info, mi.StrType | mi.LiteralType | mi.EnumType):
        return isinstance(value, str)
    if isinstance(info, mi.StructType | mi.DictType):
        return isinstance(value, dict)
    if isinstance(info, mi.ListType):
        return isinstance(value, list)
    return True  # a type this walk does not model: taken, msgspec's own error stands


def _walk(
    value: Any, at: _At, steps: list[str | int], plain: list[list[str | int]]
) -> list[str | int] | None:
    """Go's decoder over ``value``: the steps to the first failure of a type's own UnmarshalJSON
    (which stops it), with the first plain type error appended to ``plain`` (which does not)."""
    if value is None:
        return None  # null sets a pointer, a slice or a map to nil; a struct is left alone
    if at.go_type in _CUSTOM:
        return steps if _custom_fails(value, at.go_type or "") else None
    info = unwrap(at.info)
    # []byte: a base64 string; its error is saved as a type error is (the decoder goes on).
    bad_bytes = at.go_type == BYTES and (not isinstance(value, str) or go_base64_error(value))
    if bad_bytes or not _fits(value, info):
        if not plain:
            plain.append(steps)
        return None
    children: list[tuple[str | int, Any]]
    if isinstance(value, dict):
        # kubectl sends what it re-encoded from a map: every object's keys sorted.
        children = [(k, value[k]) for k in sorted(value) if isinstance(k, str)]
    elif isinstance(value, list):
        children = list(enumerate(value))
    else:
        return None
    for step, item in children:
        inner = _step(at, step)
        if inner is None:
            continue  # an unknown field (strict decoding's business) or a type not modelled
        found = _walk(item, inner, [*steps, step], plain)
        if found is not None:
            return found
    return None


def go_first_error(data: Any, cls: type[msgspec.Struct]) -> str | None:
    """The error Go's decoder returns for ``data`` decoded into ``cls``, when it can be named.

    Go reads every object's fields in the order kubectl sent them (sorted), keeps going after a
    plain type error and returns the first at the end, but stops at once when a type's own
    UnmarshalJSON fails (a quantity, an IntOrString, a time), whose error then wins.
    Upstream: decodeState.saveError, decodeState.object and decodeState.literalStore
    (encoding/json decode.go, as vendored in sigs.k8s.io/json)
    """
    plain: list[list[str | int]] = []
    steps = _walk(data, _At(type_info(cls)), [], plain)
    if steps is None and plain:
        steps = plain[0]
    return None if steps is None else _message_at(steps, data, cls)
