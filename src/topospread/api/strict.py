"""Strict field validation: an unknown or misspelled field is an error, as the API server's.

kubectl's default ``--validate=strict`` asks the API server to reject an object with a field its
schema does not have; the server answers, for a Deployment with ``spec.replicaz``::

    Deployment in version "v1" cannot be handled as a Deployment: strict decoding error:
    unknown field "spec.replicaz", unknown field "spec.template.spec.topologySpreadConstraint"

Every field of every built-in kind is in ``fields.json`` (written by
``scripts/gen_field_schema.py`` from the client models of the Kubernetes release the scheduler
mirrors). A kind it does not know (a custom resource) is not checked, as only its CRD's schema
could say what it holds. ``--validate=warn`` reports the fields as kubectl's warnings and reads
on; ``--validate=ignore`` (kubectl's ``false``) skips the check, as the reads of a live cluster do
(the server wrote those objects, perhaps at a newer version).

The check costs one more decode in C per object: each type of the schema becomes a msgspec struct
that forbids unknown fields and types every leaf as its Go type decodes (``go_fields.json``,
written by ``scripts/gen_go_types.py`` from the Go sources: an int32 in its range, a string, a
time that parses...), built the first time a kind is checked. Only when that decode fails does
Python walk the object: first as Go's decoder reads it, for the error the API server returns
(``json: cannot unmarshal ...``, a time's or a quantity's own; go_errors.go_first_error), which
comes before any unknown field in every mode but ignore, as the server's decoder fails before
field validation is asked; then for every unknown field's path.
"""

from __future__ import annotations

import enum
import json
import sys
import types
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Annotated, Any, Final

import msgspec

from topospread.api import go_values
from topospread.errors import ManifestError


class FieldValidation(enum.StrEnum):
    """kubectl's ``--validate`` values (``true`` is ``strict``, ``false`` is ``ignore``)."""

    STRICT = "strict"
    WARN = "warn"
    IGNORE = "ignore"

    @classmethod
    def parse(cls, text: str) -> FieldValidation:
        """A ``--validate`` value as kubectl reads it; a ManifestError for any other."""
        value = {"true": "strict", "false": "ignore"}.get(text.lower(), text.lower())
        try:
            return cls(value)
        except ValueError:
            raise ManifestError(
                f'--validate: invalid value "{text}": must be one of strict, warn, ignore, '
                "true or false"
            ) from None


class _Warnings(list[str]):
    """The warnings of ``warn``, each also handed to ``say`` as it is found."""

    def __init__(self, say: Callable[[str], None] | None) -> None:
        super().__init__()
        self.say = say

    def extend(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.append(line)
            if self.say is not None:
                self.say(line)


_MODE: ContextVar[FieldValidation] = ContextVar("field_validation", default=FieldValidation.STRICT)
_WARNINGS: ContextVar[_Warnings | None] = ContextVar("field_validation_warnings", default=None)


@contextmanager
def field_validation(
    mode: FieldValidation, say: Callable[[str], None] | None = None
) -> Iterator[list[str]]:
    """Objects decoded inside are checked as ``mode`` says; yields the list that collects the
    warnings of ``warn`` (one line each, naming the object and the field), each also given to
    ``say`` (e.g. printed) as it is found."""
    found = _Warnings(say)
    mode_token = _MODE.set(mode)
    warnings_token = _WARNINGS.set(found)
    try:
        yield found
    finally:
        _MODE.reset(mode_token)
        _WARNINGS.reset(warnings_token)


def report(where: str, prefix: str, problems: list[str]) -> None:
    """Problems of field validation (unknown or duplicate fields) as the mode in force says:
    strict, one ManifestError naming them all; warn, a warning each; ignore, nothing."""
    mode = _MODE.get()
    if mode is FieldValidation.STRICT:
        raise ManifestError(f"{where}: {prefix}{'; '.join(problems)}")
    warnings = _WARNINGS.get()
    if mode is FieldValidation.WARN and warnings is not None:
        warnings.extend(f"{where}: {prefix}{problem}" for problem in problems)


def current_mode() -> FieldValidation:
    """The field validation in force for objects decoded now."""
    return _MODE.get()


# ---------------------------------------------------------------------------------------------
# The schema


@cache
def _schema() -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
    text = resources.files("topospread.api").joinpath("fields.json").read_text()
    data = json.loads(text)
    return data["kinds"], data["types"]


def schema_types() -> dict[str, dict[str, Any]]:
    """Every type of the schema: its fields, each None (a scalar, list or map of scalars) or
    the name of the type it holds, alone, as ``[item]`` or as ``{"*": value}``."""
    return _schema()[1]


def type_of(api_version: str, kind: str) -> str | None:
    """The schema's type of a kind (e.g. ``V1Deployment``), or None for a kind it lacks."""
    return _schema()[0].get(f"{api_version} {kind}")


def unserved(api_version: str, kind: str) -> bool:
    """Whether ``kind`` is not served in ``api_version`` although its API group is built in
    (``Pod`` in ``v2``, ``Pud`` in ``v1``): kubectl's ``no matches for kind``, as no custom
    resource can live in a built-in group. Not judged under ``ignore``, as what a newer
    cluster serves is read that way."""
    if _MODE.get() is FieldValidation.IGNORE or type_of(api_version, kind) is not None:
        return False
    if (api_version, kind) == ("v1", "ComponentStatus"):
        return False  # served (read-only), though the schema leaves it out
    return api_version.rpartition("/")[0] in _builtin_groups()


@cache
def _builtin_groups() -> frozenset[str]:
    return frozenset(gvk.split(" ", 1)[0].rpartition("/")[0] for gvk in _schema()[0])


class DuplicateKeys(dict[str, Any]):
    """A JSON object in which some keys came twice (the last value kept), as a JSON decoder
    that marks them makes it: ``duplicates`` holds each key that came again with the number of
    distinct keys before it then (so that it is reported where the decoder met it)."""

    duplicates: list[tuple[str, int]]


_DUPLICATES_MARKED: ContextVar[bool] = ContextVar("duplicates_marked", default=False)


@contextmanager
def duplicates_marked() -> Iterator[None]:
    """Objects decoded inside may hold ``DuplicateKeys``: each is walked to report them."""
    token = _DUPLICATES_MARKED.set(True)
    try:
        yield
    finally:
        _DUPLICATES_MARKED.reset(token)


def unknown_fields(data: Any, type_name: str) -> list[str]:
    """The paths of every field of ``data`` that type ``type_name`` does not have, in document
    order, as the API server prints them (``spec.template.spec.containers[0].foo``)."""
    return [
        problem.removeprefix('unknown field "')[:-1]
        for problem in field_problems(data, type_name)
        if problem.startswith("unknown")
    ]


def field_problems(data: Any, type_name: str | None) -> list[str]:
    """Every unknown field of ``data`` (of schema type ``type_name``; None: not known, so only
    duplicates are found) and every duplicate one, as the API server's strict decoding names
    them: ``unknown field "spec.replicaz"``, ``duplicate field "spec.replicas"``."""
    out: list[str] = []
    _walk(data, type_name, "", out, _schema()[1])
    return out


def _walk(
    data: Any,
    type_name: str | None,
    path: str,
    out: list[str],
    schema: dict[str, dict[str, Any]],
) -> None:
    if not isinstance(data, dict):
        if isinstance(data, list) and type_name is None:
            for i, item in enumerate(data):
                _walk(item, None, f"{path[:-1]}[{i}].", out, schema)
        return  # a mistyped value: the typed decode names it
    fields = schema[type_name] if type_name is not None else None
    again = data.duplicates if isinstance(data, DuplicateKeys) else []
    for index, (key, value) in enumerate(data.items()):
        out.extend(f'duplicate field "{path}{k}"' for k, seen in again if seen == index)
        if fields is None:
            _walk(value, None, f"{path}{key}.", out, schema)
            continue
        if key not in fields:
            out.append(f'unknown field "{path}{key}"')
            continue
        ref = fields[key]
        if ref is None or value is None:
            if ref is None and _DUPLICATES_MARKED.get():
                _walk(value, None, f"{path}{key}.", out, schema)
            continue
        if isinstance(ref, str):
            _walk(value, ref, f"{path}{key}.", out, schema)
        elif isinstance(ref, list):
            if isinstance(value, list):
                for i, item in enumerate(value):
                    _walk(item, ref[0], f"{path}{key}[{i}].", out, schema)
        elif isinstance(value, dict):
            for name, item in value.items():
                _walk(item, ref["*"], f"{path}{key}.{name}.", out, schema)
    out.extend(f'duplicate field "{path}{k}"' for k, seen in again if seen >= len(data))


# ---------------------------------------------------------------------------------------------
# The fast check: one struct per schema type that forbids unknown fields

# NOTE: the structs' annotations are strings naming each other (the schema has cycles, e.g. a
# CRD's JSONSchemaProps); msgspec resolves them in their module's namespace on first use. Two
# families of structs, each in its own module: the exact one, and the one for machine-written
# text (see ``machine_written``), whose times msgspec's own RFC 3339 parser checks.
_MODULE_NAMES: Final = ("topospread.api._strict_types", "topospread.api._strict_types_machine")
_modules = tuple(types.ModuleType(name) for name in _MODULE_NAMES)
sys.modules.update(zip(_MODULE_NAMES, _modules, strict=True))


def _int(bits: int, signed: bool = True) -> Any:
    low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
    return Annotated[int, msgspec.Meta(ge=low, le=high)]


def _text(pattern: str) -> Any:
    return Annotated[str, msgspec.Meta(pattern=pattern)]


# Each shape of go_fields.json as the strict decode takes it (the Go kind's JSON type and
# range; a string a custom UnmarshalJSON parses, by a pattern at least as strict as Go). A
# value these refuse is judged by Go's rules (go_errors) before anything is said, so the
# patterns may refuse more than Go (a time with a one-digit hour) but never less.
_SHAPES: Final[dict[str, Any]] = {
    "string": str,
    "bool": bool,
    "float32": float,
    "float64": float,
    "int": _int(64),
    "int8": _int(8),
    "int16": _int(16),
    "int32": _int(32),
    "int64": _int(64),
    "uint": _int(64, False),
    "uint8": _int(8, False),
    "uint16": _int(16, False),
    "uint32": _int(32, False),
    "uint64": _int(64, False),
    "bytes": _text(go_values.BASE64_PATTERN),
    "Time": _text(go_values.TIME_PATTERN),
    "MicroTime": _text(go_values.MICRO_TIME_PATTERN),
    "Duration": _text(go_values.DURATION_PATTERN),
    # Quantity.UnmarshalJSON parses a string or a number's literal (a float: judged by Go's
    # rules on the slow path, as its literal is what kubectl re-encoded).
    "Quantity": _text(go_values.QUANTITY_PATTERN) | int,
    "IntOrString": str | _int(32),
    "any": Any,
    "ResourceQuantity": _text(go_values.QUANTITY_PATTERN) | int,  # a v1.ResourceList's
}
# NOTE: a pattern costs a call into re per value (0.4 us): on the chart cluster's 90,000 times,
# 4% of its read. Machine-written text (kubectl get, cluster dumps) holds the times the API
# server wrote, as RFC 3339 with "T" and "Z" or "+hh:mm": msgspec's RFC 3339 parser checks them
# there, in C, and refuses what Go refuses except four forms no server writes ("t" or " " for
# "T", "z" for "Z", a "+hhmm" offset; see test_field_types.py). The quantities of a
# v1.ResourceList (65,000 there, 2%: requests, limits, capacity) have their JSON type checked
# there, and are parsed when read: the validation of the pods and nodes that hold them refuses
# one that does not parse (as resource_validation says it); in the other kinds' resource lists
# (quotas, limit ranges) of a machine-written file a malformed one is not noticed.
_MACHINE_SHAPES: Final[dict[str, Any]] = {
    **_SHAPES,
    "Time": Annotated[datetime, msgspec.Meta(tz=True)],
    "ResourceQuantity": str | int,
}
for _module, _shapes in zip(_modules, (_SHAPES, _MACHINE_SHAPES), strict=True):
    for _name, _annotation in _shapes.items():
        setattr(_module, f"_{_name}", _annotation)
    _module.Any = Any  # type: ignore[attr-defined]

_MACHINE_WRITTEN: ContextVar[bool] = ContextVar("machine_written", default=False)


@contextmanager
def machine_written(yes: bool = True) -> Iterator[None]:
    """Raw JSON checked inside is machine-written (a large file: see decode.SMALL_TEXT_BYTES)."""
    token = _MACHINE_WRITTEN.set(yes)
    try:
        yield
    finally:
        _MACHINE_WRITTEN.reset(token)


def _leaf(shape: str) -> str:
    """A shape's annotation in the structs' modules; null is taken everywhere, as by Go."""
    if shape.startswith("[]"):
        return f"list[{_leaf(shape[2:])}] | None"
    if shape.startswith("map[string]"):
        return f"dict[str, {_leaf(shape[11:])}] | None"
    return f"_{shape} | None" if shape in _SHAPES else "Any"


@cache
def go_fields() -> tuple[dict[str, str], dict[str, dict[str, list[str]]]]:
    """go_fields.json (scripts/gen_go_types.py): each schema type's Go struct name, and each
    field's Go type and shape as ``[go_type, shape]``."""
    text = resources.files("topospread.api").joinpath("go_fields.json").read_bytes()
    data = msgspec.json.decode(text)
    return data["structs"], data["fields"]


def strict_struct_type(cls: type) -> str | None:
    """The schema type a strict struct was built for, or None for any other class."""
    return cls.__name__ if cls.__module__ in _MODULE_NAMES else None


def _struct(type_name: str, machine: bool = False) -> type[msgspec.Struct]:
    """The strict struct of a schema type: of the exact family, or of the machine-written."""
    module = _modules[machine]
    built = module.__dict__.get(type_name)
    if built is not None:
        return built  # type: ignore[no-any-return]
    schema = _schema()[1]
    typed = go_fields()[1]
    todo, names = [type_name], []
    while todo:  # every type reachable that is not built yet
        name = todo.pop()
        if name in module.__dict__ or name in names:
            continue
        names.append(name)
        for ref in schema[name].values():
            inner = ref["*"] if isinstance(ref, dict) else ref[0] if isinstance(ref, list) else ref
            if inner is not None:
                todo.append(inner)
    for name in names:
        fields: list[tuple[str, Any, Any]] = []
        rename: dict[str, str] = {}
        leaves = typed.get(name, {})
        for i, (key, ref) in enumerate(schema[name].items()):
            if ref is None and key in leaves:
                go_type, shape = leaves[key]
                if go_type == "v1.ResourceList":
                    shape = "map[string]ResourceQuantity"
                annotation = _leaf(shape)
            elif ref is None:
                annotation = "Any"
            elif isinstance(ref, str):
                annotation = f"{ref} | None"
            elif isinstance(ref, list):
                annotation = f"list[{ref[0]} | None] | None"
            else:
                annotation = f"dict[str, {ref['*']} | None] | None"
            fields.append((f"f{i}", annotation, None))
            rename[f"f{i}"] = key
        # NOTE: gc=False: a decoded struct holds only what JSON decodes to, never a cycle.
        setattr(
            module,
            name,
            msgspec.defstruct(
                name,
                fields,
                module=module.__name__,
                rename=rename,
                forbid_unknown_fields=True,
                gc=False,
            ),
        )
    return module.__dict__[type_name]  # type: ignore[no-any-return]


@cache
def _json_decoder(type_name: str, machine: bool) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(_struct(type_name, machine))


def decode_error(data: Any, api_version: str, kind: str) -> str | None:
    """The error the API server's decoder returns for ``data`` of a built-in kind (the first
    value of the wrong JSON type in the order Go reads, or a custom unmarshaler's error: a
    time, a quantity...), or None when it decodes (or the kind is not in the schema)."""
    type_name = type_of(api_version, kind)
    if type_name is None:
        return None
    return type_error(data, type_name)


def type_error(data: Any, type_name: str) -> str | None:
    """The API server's decoder's error for ``data`` as schema type ``type_name`` (e.g.
    ``V1LabelSelector``), or None when it decodes."""
    # Imported here: go_errors reads the Go types through go_types, which imports this module.
    from topospread.api.go_errors import go_first_error

    return go_first_error(data, _struct(type_name))


def check_object(
    data: Any, api_version: str, kind: str, where: str, *, raw: bytes | None = None
) -> None:
    """Apply the field validation in force to one object: ``data`` parsed, or ``raw`` JSON.

    ``where`` names the file and the object (``web.yaml (Deployment default/web)``). A value of
    the wrong type is a ManifestError with the decoder's message in every mode but ignore (the
    server's decoder fails before field validation is asked); then strict: a ManifestError
    naming the unknown fields; warn: one warning per field; ignore: nothing.
    """
    mode = _MODE.get()
    # NOTE: ignore checks nothing, not even the types of fields we do not read (the server
    # would refuse a wrong one whatever the mode): it is how a live cluster's objects are
    # read, which the server wrote, and it costs no second decode.
    if mode is FieldValidation.IGNORE:
        return
    type_name = type_of(api_version, kind)
    marked = _DUPLICATES_MARKED.get()
    if type_name is None and not marked:
        return
    if type_name is not None and not marked:
        try:
            if raw is not None:
                _json_decoder(type_name, _MACHINE_WRITTEN.get()).decode(raw)
            else:
                msgspec.convert(data, _struct(type_name))
            return
        except msgspec.ValidationError:
            pass
    if data is None:
        data = msgspec.json.decode(raw) if raw is not None else None
    # sigs.k8s.io/json returns the decode error before the strict ones (unknown fields).
    said = decode_error(data, api_version, kind)
    if said is not None:
        raise ManifestError(f"{where}: {said}")
    problems = field_problems(data, type_name)
    if not problems:
        return
    if mode is FieldValidation.STRICT:
        raise ManifestError(f"{where}: strict decoding error: {', '.join(problems)}")
    report(where, "", problems)
