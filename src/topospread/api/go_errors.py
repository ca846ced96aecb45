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
decoder into its int32 (``... of type int32``, the outer field named), a metav1.Time decodes
into a string (``... of type string``), and a resource.Quantity fails to parse with
apimachinery's message (given the field's path and value here, as resource_validation does).

NOTE: Go keeps decoding after a type error and reports the first one, unless a type's own
UnmarshalJSON fails later (a quantity, an IntOrString), which wins; msgspec stops at the first
wrong value, so of two mistakes in one object we may name the other one.

Upstream: UnmarshalTypeError.Error and decodeState.addErrorContext (encoding/json decode.go,
as vendored in sigs.k8s.io/json), IntOrString.UnmarshalJSON, Time.UnmarshalJSON and
Quantity.UnmarshalJSON (k8s.io/apimachinery, v1.35).
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any, Final

import msgspec
import msgspec.inspect as mi

from topospread.api.decode_errors import msgspec_type, render, type_info
from topospread.api.go_types import (
    DICT_STRUCTS,
    INT_OR_STRING,
    QUANTITY,
    TIME,
    element_go_type,
    field_go_type,
    go_struct_name,
    unwrap,
)
from topospread.api.resource import ERR_FORMAT_WRONG

_ERROR: Final = re.compile(r"(?P<message>.*?) - at `(?P<path>\$[^`]*)`")
_EXPECTED: Final = re.compile(r"Expected `[^`]*`, got `(?P<got>[^`]*)`")
_BOUND: Final = re.compile(r"Expected `int` (?:>=|<=) -?[0-9]+")
_SEGMENT: Final = re.compile(r"\.([^.\[]+)|\[(\d+)\]|\[\.\.\.\]")
_INTEGERS: Final = frozenset({"int8", "int16", "int32", "int64", "int", "uint32", "uint64"})


def go_type_error(err: msgspec.ValidationError, data: Any, cls: type[msgspec.Struct]) -> str | None:
    """msgspec's type error for ``data`` decoded into ``cls`` in the API server's words, or None
    when the Go type of the field is not known for sure (the caller keeps its own wording)."""
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
    if steps is None or go_struct_name(cls) is None:
        return None
    info: mi.Type = type_info(cls)
    go_type: str | None = None
    struct = ""
    fields: list[str] = []
    value = data
    shown = ""  # the path as a field error names it: spec.containers[0].resources.limits[cpu]
    for step in steps:
        info = unwrap(info)
        if isinstance(step, str) and isinstance(info, mi.StructType):
            field = next((f for f in info.fields if f.encode_name == step), None)
            if field is None:
                return None
            go_type = field_go_type(info.cls, field)
            struct = go_struct_name(info.cls) or ""
            fields.append(step)
            shown = f"{shown}.{step}" if shown else step
            info = field.type
        elif isinstance(info, mi.DictType) and go_type in DICT_STRUCTS and isinstance(step, str):
            struct = go_type.removeprefix("v1.")
            go_type = DICT_STRUCTS[go_type].get(step)
            fields.append(step)
            shown = f"{shown}.{step}"
            info = info.value_type
        elif isinstance(info, mi.DictType | mi.ListType) and go_type is not None:
            go_type = element_go_type(go_type)
            shown = f"{shown}[{step}]"
            info = info.value_type if isinstance(info, mi.DictType) else info.item_type
        else:
            return None
        if go_type is None:
            return None
        value = value[step]
    if go_type is None or not fields:
        return None
    if go_type == QUANTITY:
        return f"{shown}: Invalid value: {render(value)}: {ERR_FORMAT_WRONG}"
    if go_type == INT_OR_STRING:
        go_type = "int32"  # a string is always taken: the error is its int32's
    elif go_type == TIME:
        go_type = "string"
    what = json_kind(value)
    if what == "number" and go_type in _INTEGERS:
        what = f"number {go_number(value)}"
    return (
        f"json: cannot unmarshal {what} into Go struct field "
        f"{struct}.{'.'.join(fields)} of type {go_type}"
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
