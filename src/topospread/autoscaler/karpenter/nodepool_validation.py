"""A NodePool manifest decoded and validated as the API server does for Karpenter's NodePool
CRD (``karpenter.sh/v1``, the CRD of the release named in ``nodepool_schema.json``, written by
``scripts/gen_nodepool_schema.py``).

In the API server's order: strict decoding (an unknown field anywhere, ``metadata`` judged as an
ObjectMeta: ``strict decoding error: unknown field "spec.template.spec.requirments"``), the
schema's defaults, the object metadata (a DNS-subdomain name, no namespace), the OpenAPI v3
checks with apiextensions' messages (type, enum, pattern, minimum/maximum, maxLength,
maxItems, maxProperties, required, the int-or-string ``anyOf`` of ``limits``), the set-list
duplicates, then the CEL ``x-kubernetes-validations`` rules.

CEL is not evaluated generically: each rule below is implemented by hand, found by its exact
text in the schema, and fails with its own ``message`` as the API server prints it (the value
of a scalar, none for an object or a list; an evaluation error, e.g. ``no such key: values``
when a requirement with operator In has no values, as ``<error> evaluating rule: <message>``):

- ``spec.disruption.budgets``: ``'schedule' must be set with 'duration'``;
- ``spec.template.metadata.labels``: the ``karpenter.sh`` domain, ``karpenter.sh/nodepool``
  and ``kubernetes.io/hostname`` are restricted;
- ``spec.template.spec.requirements[*].key``: the same three restrictions;
- ``spec.template.spec.requirements``: In needs values; Gt/Lt/Gte/Lte one non-negative
  integer; minValues at most the number of values;
- ``spec.template.spec.nodeClassRef.{group,kind,name}``: ``... may not be empty``;
- ``spec``: only ``limits.nodes`` and no ``weight`` on a static NodePool (``replicas``).

Skipped: the transition rules (``oldSelf``: ``nodeClassRef.group``/``kind`` immutable, no
switch between static and dynamic), which the API server evaluates only on an update; a
NodePool here is always created. A rule not in this list is an error of this module (a test
checks every rule of the schema is known).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from importlib import resources
from typing import Any, Final

import msgspec

from topospread.api import strict
from topospread.api.field import (
    OMIT_VALUE,
    BadValue,
    ErrorType,
    FieldError,
    GoJSON,
    Path,
    duplicate,
    invalid,
    not_supported,
    required,
    too_long,
    too_many,
)
from topospread.api.meta_validation import validate_object_meta
from topospread.api.types import ObjectMeta

API_VERSION: Final = "karpenter.sh/v1"
KIND: Final = "NodePool"
Schema = Mapping[str, Any]


@cache
def _document() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("nodepool_schema.json").read_text()
    doc: dict[str, Any] = json.loads(text)
    return doc


def crd_release() -> str:
    """The Karpenter release whose CRD the schema is."""
    return str(_document()["release"])


def root_schema() -> Schema:
    """The CRD's openAPIV3Schema (apiVersion, kind, metadata, spec)."""
    schema: Schema = _document()["schema"]
    return schema


def schema_at(*names: str) -> Schema:
    """The schema of a field under the root, by property names (``"spec", "weight"``)."""
    node = root_schema()
    for name in names:
        node = node["properties"][name]
    return node


# ---------------------------------------------------------------------------------------------
# Strict decoding: the fields the structural schema would prune


def unknown_fields(data: Any, schema: Schema, path: str) -> Iterator[tuple[str, tuple[str, ...]]]:
    """The path of every field of ``data`` its schema does not have, in document order, each
    with the fields its object may have (``metadata`` of the root judged as an ObjectMeta)."""
    if isinstance(data, list):
        items = schema.get("items")
        if items is not None:
            for i, item in enumerate(data):
                yield from unknown_fields(item, items, f"{path}[{i}]")
        return
    if not isinstance(data, dict):
        return
    props = schema.get("properties")
    extra = schema.get("additionalProperties")
    for key, value in data.items():
        where = f"{path}.{key}" if path else str(key)
        if props is not None and key in props:
            if where == "metadata" and value is not None:
                for problem in strict.unknown_fields(value, "V1ObjectMeta"):
                    yield f"metadata.{problem}", ()
            else:
                yield from unknown_fields(value, props[key], where)
        elif isinstance(extra, Mapping):
            yield from unknown_fields(value, extra, where)
        elif props is not None or extra is False:
            yield where, tuple(props or ())


# ---------------------------------------------------------------------------------------------
# Defaults, applied before validation as the API server does


def with_defaults(data: Any, schema: Schema) -> Any:
    """A copy of ``data`` with each absent (or null) property that has a default set to it,
    recursively. Upstream: structuraldefaulting.Default (apiextensions-apiserver, v1.35)"""
    if isinstance(data, list):
        items = schema.get("items")
        return [with_defaults(v, items) if items else v for v in data]
    if not isinstance(data, dict):
        return data
    out = dict(data)
    props = schema.get("properties", {})
    for name, prop in props.items():
        if out.get(name) is None and "default" in prop:
            out[name] = copy.deepcopy(prop["default"])
        if out.get(name) is None:
            out.pop(name, None)  # a null is pruned, as the field is not nullable
        else:
            out[name] = with_defaults(out[name], prop)
    extra = schema.get("additionalProperties")
    if isinstance(extra, Mapping):
        for key in out:
            if key not in props:
                out[key] = with_defaults(out[key], extra)
    return out


# ---------------------------------------------------------------------------------------------
# The OpenAPI v3 checks (kube-openapi's validate package, as apiextensions converts its errors)


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "null"


def _bad(value: Any) -> BadValue:
    """A value as field.Error prints an unstructured one."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return GoJSON(value)


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


@cache
def _regex(pattern: str) -> re.Pattern[str]:
    # Go's $ (without the m flag) is the end of the text only; Python's also matches before a
    # final newline.
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


def _type_ok(value: Any, expected: str) -> bool:
    actual = _json_type(value)
    if expected == "integer" and actual == "number":
        return float(value).is_integer()
    if expected == "number" and actual == "integer":
        return True
    return actual == expected


def schema_errors(data: Any, schema: Schema, path: str) -> list[FieldError]:
    """Every OpenAPI check ``data`` fails, in kube-openapi's order for each node (type, anyOf,
    string, number, array, enum, object), properties in document order.

    Upstream: SchemaValidator.Validate (kube-openapi pkg/validation/validate) and
    kubeOpenAPIResultToFieldErrors (apiextensions-apiserver pkg/apiserver/validation)
    """
    errs: list[FieldError] = []
    at = Path.root(path)
    expected = schema.get("type")
    if expected is not None and not _type_ok(data, expected):
        got = _json_type(data)
        return [
            FieldError(
                ErrorType.TYPE_INVALID,
                path,
                got,
                f'{path} in body must be of type {expected}: "{got}"',
            )
        ]
    options = schema.get("anyOf")
    if options:
        failures = [schema_errors(data, option, path) for option in options]
        if all(failures):
            # A nil field path, printed by Go as <nil>.
            detail = f'"{path}" must validate at least one schema (anyOf)'
            errs.append(FieldError(ErrorType.INVALID, "<nil>", "", detail))
            errs.extend(failures[0])
    if isinstance(data, str):
        if "maxLength" in schema and len(data) > schema["maxLength"]:
            errs.append(too_long(at, schema["maxLength"]))
        if "minLength" in schema and len(data) < schema["minLength"]:
            errs.append(
                invalid(
                    at, data, f"{path} in body should be at least {schema['minLength']} chars long"
                )
            )
        pattern = schema.get("pattern")
        if pattern is not None and not _regex(pattern).search(data):
            errs.append(invalid(at, data, f"{path} in body should match '{pattern}'"))
    if isinstance(data, int | float) and not isinstance(data, bool):
        if "maximum" in schema and data > schema["maximum"]:
            limit = _number(schema["maximum"])
            errs.append(
                invalid(at, data, f"{path} in body should be less than or equal to {limit}")
            )
        if "minimum" in schema and data < schema["minimum"]:
            limit = _number(schema["minimum"])
            errs.append(
                invalid(at, data, f"{path} in body should be greater than or equal to {limit}")
            )
    if isinstance(data, list):
        items = schema.get("items")
        if items is not None:
            for i, item in enumerate(data):
                errs.extend(schema_errors(item, items, f"{path}[{i}]"))
        if "maxItems" in schema and len(data) > schema["maxItems"]:
            errs.append(too_many(at, len(data), schema["maxItems"]))
    if "enum" in schema and data not in schema["enum"]:
        errs.append(not_supported(at, _bad(data), [str(v) for v in schema["enum"]]))
    if isinstance(data, dict):
        errs.extend(_object_errors(data, schema, path))
    return errs


def _object_errors(data: dict[str, Any], schema: Schema, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    at = Path.root(path) if path else Path.nil()
    if "maxProperties" in schema and len(data) > schema["maxProperties"]:
        errs.append(too_many(at, len(data), schema["maxProperties"]))
    props = schema.get("properties", {})
    extra = schema.get("additionalProperties")
    prefix = f"{path}." if path else ""
    if isinstance(extra, Mapping):
        for key, value in data.items():
            if key not in props:
                errs.extend(schema_errors(value, extra, f"{prefix}{key}"))
    for key, value in data.items():
        if key in props:
            errs.extend(schema_errors(value, props[key], f"{prefix}{key}"))
    errs.extend(
        required(Path.root(f"{prefix}{k}")) for k in schema.get("required", ()) if k not in data
    )
    return errs


def set_duplicates(data: Any, schema: Schema, path: Path) -> list[FieldError]:
    """Each repeated item of a list of ``x-kubernetes-list-type: set``.

    Upstream: ValidateListSetsAndMaps (apiextensions-apiserver pkg/apiserver/schema/listtype)
    """
    errs: list[FieldError] = []
    if isinstance(data, list):
        items = schema.get("items") or {}
        if schema.get("x-kubernetes-list-type") == "set":
            seen: list[Any] = []
            for i, item in enumerate(data):
                if item in seen:
                    errs.append(duplicate(path.index(i), _bad(item)))
                else:
                    seen.append(item)
        for i, item in enumerate(data):
            errs.extend(set_duplicates(item, items, path.index(i)))
    elif isinstance(data, dict):
        props = schema.get("properties", {})
        for key, value in data.items():
            if key in props:
                errs.extend(set_duplicates(value, props[key], path.child(key)))
    return errs


# ---------------------------------------------------------------------------------------------
# The CEL rules, each by hand


class _CelError(Exception):
    """A rule's evaluation failed (CEL's error value), e.g. ``no such key: values``."""


def _get(obj: Mapping[str, Any], key: str) -> Any:
    if key not in obj:
        raise _CelError(f"no such key: {key}")
    return obj[key]


def _cel_int(text: str) -> int:
    """CEL's int(string): Go's strconv.ParseInt(s, 10, 64)."""
    if not re.fullmatch(r"[+-]?[0-9]+", text) or not -(2**63) <= int(text) < 2**63:
        raise _CelError("type conversion error from 'string' to 'int'")
    return int(text)


def _cel_all(items: Any, predicate: Callable[[Any], bool]) -> bool:
    """CEL's ``all`` macro: false if any item is false, else the first error, else true."""
    error: _CelError | None = None
    for item in items:
        try:
            if not predicate(item):
                return False
        except _CelError as err:
            error = error or err
    if error is not None:
        raise error
    return True


_KARPENTER_LABELS: Final = ("karpenter.sh/capacity-type", "karpenter.sh/nodepool")


def _domain_allowed(key: str) -> bool:
    prefix = re.match(r"[^/]+", key)
    return key in _KARPENTER_LABELS or not (
        prefix is not None and prefix[0].endswith("karpenter.sh")
    )


def _comparison(x: Mapping[str, Any]) -> bool:
    if _get(x, "operator") not in ("Gt", "Lt", "Gte", "Lte"):
        return True
    values = _get(x, "values")
    return len(values) == 1 and _cel_int(values[0]) >= 0


def _min_values(x: Mapping[str, Any]) -> bool:
    if _get(x, "operator") == "In" and "minValues" in x:
        return bool(len(_get(x, "values")) >= x["minValues"])
    return True


def _static_limits(spec: Mapping[str, Any]) -> bool:
    limits = spec.get("limits")
    return "replicas" not in spec or not limits or (len(limits) == 1 and "nodes" in limits)


# Each rule's exact text in the CRD and its implementation, given ``self``.
CEL_RULES: Final[Mapping[str, Callable[[Any], bool]]] = {
    "self.all(x, has(x.schedule) == has(x.duration))": lambda s: all(
        ("schedule" in x) == ("duration" in x) for x in s
    ),
    'self.all(x, x in ["karpenter.sh/capacity-type", "karpenter.sh/nodepool"] || '
    '!x.find("^([^/]+)").endsWith("karpenter.sh"))': lambda s: all(map(_domain_allowed, s)),
    'self.all(x, x != "karpenter.sh/nodepool")': lambda s: "karpenter.sh/nodepool" not in s,
    'self.all(x, x != "kubernetes.io/hostname")': lambda s: "kubernetes.io/hostname" not in s,
    'self in ["karpenter.sh/capacity-type", "karpenter.sh/nodepool"] || '
    '!self.find("^([^/]+)").endsWith("karpenter.sh")': _domain_allowed,
    'self != "karpenter.sh/nodepool"': lambda s: s != "karpenter.sh/nodepool",
    'self != "kubernetes.io/hostname"': lambda s: s != "kubernetes.io/hostname",
    "self != ''": lambda s: s != "",
    "self.all(x, x.operator == 'In' ? x.values.size() != 0 : true)": lambda s: _cel_all(
        s, lambda x: _get(x, "operator") != "In" or len(_get(x, "values")) != 0
    ),
    "self.all(x, (x.operator == 'Gt' || x.operator == 'Lt' || x.operator == 'Gte' || "
    "x.operator == 'Lte') ? (x.values.size() == 1 && int(x.values[0]) >= 0) : true)": lambda s: (
        _cel_all(s, _comparison)
    ),
    "self.all(x, (x.operator == 'In' && has(x.minValues)) ? x.values.size() >= x.minValues "
    ": true)": lambda s: _cel_all(s, _min_values),
    "!has(self.replicas) || (!has(self.limits) || size(self.limits) == 0 || "
    "(size(self.limits) == 1 && 'nodes' in self.limits))": _static_limits,
    "!has(self.replicas) || !has(self.weight)": lambda s: "replicas" not in s or "weight" not in s,
}


def uses_old_self(rule: str) -> bool:
    """A transition rule: evaluated only on an update."""
    return "oldSelf" in rule


def cel_errors(data: Any, schema: Schema, path: Path) -> list[FieldError]:
    """The ``x-kubernetes-validations`` rules ``data`` fails: a node's own rules, then its
    items' or properties'. Upstream: Validator.Validate (apiextensions-apiserver
    pkg/apiserver/schema/cel/validation.go, v1.35)"""
    errs: list[FieldError] = []
    kind = schema.get("type", "")
    for rule in schema.get("x-kubernetes-validations", ()):
        text = rule["rule"]
        if uses_old_self(text):
            continue
        message = rule.get("message", "").strip() or f"failed rule: {text.strip()}"
        try:
            ok = CEL_RULES[text](data)
        except _CelError as err:
            errs.append(invalid(path, kind, f"{err} evaluating rule: {message}"))
            continue
        if not ok:
            errs.append(invalid(path, OMIT_VALUE if kind in ("object", "array") else data, message))
    if isinstance(data, list) and "items" in schema:
        for i, item in enumerate(data):
            errs.extend(cel_errors(item, schema["items"], path.index(i)))
    elif isinstance(data, dict):
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for key, value in data.items():
            if key in props:
                errs.extend(cel_errors(value, props[key], path.child(key)))
            elif isinstance(extra, Mapping):
                errs.extend(cel_errors(value, extra, path.key(key)))
    return errs


# ---------------------------------------------------------------------------------------------
# The whole object


def _blocking(errs: list[FieldError]) -> bool:
    """Upstream: hasBlockingErr (apiextensions-apiserver pkg/registry/customresource)"""
    return any(
        e.type
        in (
            ErrorType.NOT_SUPPORTED,
            ErrorType.REQUIRED,
            ErrorType.TOO_LONG,
            ErrorType.TOO_MANY,
            ErrorType.TYPE_INVALID,
        )
        for e in errs
    )


_GO_TYPES: Final = {
    str: "string",
    bool: "bool",
    int: "int64",
    float: "float64",
    list: "[]interface {}",
}


class MetadataError(ValueError):
    """The object's metadata is not an object: the API server's decoder refuses it."""


def _metadata(meta: Any) -> ObjectMeta:
    """The metadata as the API server reads a custom resource's: a field of the wrong type is
    dropped, as upstream's DropMalformedFields does for custom resources.

    Upstream: GetObjectMetaWithOptions (apiextensions-apiserver pkg/apiserver/schema/objectmeta)
    """
    if meta is None:
        return ObjectMeta()
    if not isinstance(meta, dict):
        go_type = _GO_TYPES.get(type(meta), type(meta).__name__)
        raise MetadataError(f"invalid metadata: expected object, got {go_type}")
    kept: dict[str, Any] = {}
    for key, value in meta.items():
        try:
            msgspec.convert({**kept, key: value}, ObjectMeta)
        except msgspec.ValidationError:
            continue
        kept[key] = value
    return msgspec.convert(kept, ObjectMeta)


def _metadata_errors(meta: ObjectMeta) -> list[FieldError]:
    return validate_object_meta(meta, Path.root("metadata"), requires_namespace=False)


def validate_manifest(
    data: Mapping[str, Any],
) -> tuple[list[tuple[str, tuple[str, ...]]], dict[str, Any], list[FieldError]]:
    """A NodePool manifest as the API server takes it: the unknown fields, each with the fields
    its object may have (strict decoding refuses the object for them before anything else is
    judged; under warn or ignore they are pruned, so nothing below reads them), the defaulted
    object, and every validation error in the API server's order (metadata, schema,
    set lists, CEL rules; the rules only when nothing blocks them, as upstream). Raises
    MetadataError when the metadata is not an object."""
    schema = root_schema()
    meta = _metadata(data.get("metadata"))
    # The metadata's unknown fields come first, then those the pruning finds.
    unknown = sorted(
        unknown_fields(data, schema, ""), key=lambda u: not u[0].startswith("metadata.")
    )
    obj = with_defaults(data, schema)
    # A create resets status (the status subresource's PrepareForCreate) before validation.
    obj.pop("status", None)
    errs = _metadata_errors(meta)
    rest = {k: v for k, v in obj.items() if k != "metadata"}
    errs.extend(schema_errors(rest, _without_metadata(), ""))
    errs.extend(set_duplicates(obj, schema, Path.nil()))
    if not _blocking(errs):
        errs.extend(cel_errors(obj, schema, Path.nil()))
    return unknown, obj, errs


@cache
def _without_metadata() -> Schema:
    """The root's schema but for metadata, which is judged as an ObjectMeta."""
    root = root_schema()
    props = {k: v for k, v in root["properties"].items() if k != "metadata"}
    return {**root, "properties": props}
