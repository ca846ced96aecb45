"""The slow path of decoding: the data cleaned as the API server's JSON decoder sees it (null
means unset, keys as JSON strings), then msgspec's error explained with the field's path and
the value the manifest gave, in one line.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

import msgspec
import msgspec.inspect as mi

from topospread.api.goyaml import json_key

_TYPE_INFO: dict[type[msgspec.Struct], mi.Type] = {}


def type_info(cls: type[msgspec.Struct]) -> mi.Type:
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


def clean(value: Any, info: mi.Type) -> Any:
    """``value`` as Go's decoder treats it for ``info``: null fields unset, keys strings."""
    if isinstance(info, mi.UnionType):
        concrete = [x for x in info.types if not isinstance(x, mi.NoneType)]
        if len(concrete) == 1:
            return clean(value, concrete[0])
        if any(isinstance(x, mi.IntType) for x in concrete) and not any(
            isinstance(x, mi.FloatType) for x in concrete
        ):
            return _integral(value)  # an IntOrString
        return value
    if isinstance(info, mi.StructType):
        if not isinstance(value, dict):
            return value
        fields = {f.encode_name: f.type for f in info.fields}
        struct_out: dict[Any, Any] = {}
        for k, v in value.items():
            k = json_key(k)
            field_type = fields.get(k)
            if field_type is None:
                continue  # unknown fields are ignored, as the API server's decoder drops them
            if v is None:
                if _nullable(field_type):
                    struct_out[k] = None
                continue  # null leaves a non-pointer field at its zero value
            struct_out[k] = clean(v, field_type)
        return struct_out
    if isinstance(info, mi.DictType):
        if not isinstance(value, dict):
            return value
        item = info.value_type
        return {json_key(k): _zero(item) if v is None else clean(v, item) for k, v in value.items()}
    if isinstance(info, mi.ListType):
        if not isinstance(value, list):
            return value
        item = info.item_type
        return [_zero(item) if v is None else clean(v, item) for v in value]
    if isinstance(info, mi.AnyType):
        return _json_keys_deep(value)
    if isinstance(info, mi.IntType):
        return _integral(value)
    return value


def _integral(value: Any) -> Any:
    """A float with no fraction as the integer kubectl sends: it re-encodes the float64 it read
    as Go does (2.0 as ``2``, which an int32 field takes; 1e21 and up keep their exponent)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    return value


def _json_keys_deep(value: Any) -> Any:
    if isinstance(value, dict):
        return {json_key(k): _json_keys_deep(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_keys_deep(v) for v in value]
    return value


_ERROR: Final = re.compile(r"(?P<message>.*?)(?: - at `(?P<path>[^`]*)`(?: in `(?P<in>[^`]*)`)?)?")
_EXPECTED: Final = re.compile(r"Expected `(?P<expected>[^`]*)`, got `(?P<got>[^`]*)`")
# msgspec's message for a number outside a Meta bound: only the int32 fields have bounds.
_BOUND: Final = re.compile(r"Expected `int` (?:>=|<=) -?[0-9]+")
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


def msgspec_type(value: Any) -> str:
    """The name msgspec gives a decoded JSON value's type in its errors (``Expected `int`, got
    `str```): null, bool, int, float, str, array or object."""
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


def explain(err: msgspec.ValidationError, data: Any) -> str:
    """msgspec's ``Expected `int`, got `str` - at `$.spec.x[0].y``` as a Kubernetes field error."""
    m = _ERROR.fullmatch(str(err))
    assert m is not None  # the pattern matches any text
    message, path, key_in = m.group("message"), m.group("path"), m.group("in")
    if path == "key" and key_in is not None:
        return f"{_field_path(key_in)}: map keys must be strings"
    expected = _EXPECTED.fullmatch(message)
    if path is None:
        return message
    if expected is None and _BOUND.fullmatch(message):
        # encoding/json refuses a number that does not fit the Go field: "cannot unmarshal
        # number 3000000000 into Go struct field DeploymentSpec.spec.replicas of type int32".
        found = _find(path, data, "int")
        field = _field_path(path) if found is None else found[0]
        shown = "" if found is None else f" {render(found[1])}"
        return f"{field}: cannot unmarshal number{shown} into a field of type int32"
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
    shown = render(found[1]) if found is not None else f"a value of type {got}"
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
            return (shown, value) if msgspec_type(value) == got else None
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


def render(value: Any) -> str:
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


def unknown_fields(value: Any, cls: type[msgspec.Struct], allowed: frozenset[str]) -> list[str]:
    """The paths of the fields in ``value`` that ``cls`` does not have (besides the top-level
    names in ``allowed``), as a strict decoder names them: ``defaultConstraints[0].maxskew``.
    For objects outside the kinds ``strict`` knows (plugin args); values of the wrong type are
    left to the typed decode."""
    found: list[str] = []

    def walk(value: Any, info: mi.Type, shown: str) -> None:
        if isinstance(info, mi.UnionType):
            structs = [x for x in info.types if not isinstance(x, mi.NoneType)]
            if len(structs) == 1:
                walk(value, structs[0], shown)
        elif isinstance(info, mi.StructType) and isinstance(value, dict):
            fields = {f.encode_name: f.type for f in info.fields}
            for key, item in value.items():
                name = json_key(key)
                path = f"{shown}.{name}" if shown else name
                if name in fields:
                    walk(item, fields[name], path)
                elif shown or name not in allowed:
                    found.append(path)
        elif isinstance(info, mi.ListType) and isinstance(value, list):
            for i, item in enumerate(value):
                walk(item, info.item_type, f"{shown}[{i}]")

    walk(value, type_info(cls), "")
    return found
