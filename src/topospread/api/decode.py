"""Parsed manifests and JSON into the typed objects of ``topospread.api.types``: the kind
registry (dispatch on apiVersion and kind; a kind nobody registered comes back as an
``UnknownObject``, never dropped), Lists and typed lists flattened, msgspec decoding JSON
straight into the structs, each object checked by field validation, namespaced objects given
the ``default`` namespace, and every problem one ``ManifestError`` naming the object and field.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final, NamedTuple, TypeAlias, TypeVar, overload

import msgspec

from topospread.api import storage as st
from topospread.api import types as t
from topospread.api.decode_errors import clean, explain, render, type_info
from topospread.api.field import JSONable, go_json
from topospread.api.go_errors import go_type_error
from topospread.api.goyaml import decode_utf8
from topospread.api.strict import (
    DuplicateKeys,
    FieldValidation,
    check_object,
    current_mode,
    decode_error,
    machine_written,
    unserved,
)
from topospread.errors import ManifestError

Object: TypeAlias = msgspec.Struct
"""What a manifest decodes to: a registered API struct, or an ``UnknownObject``."""

T = TypeVar("T", bound=msgspec.Struct)

# NOTE: rapidyaml and msgspec keep the last of two equal keys without a word. Text below this
# size (every hand-written manifest and chart output seen) is read by parsers that report them,
# as sigs.k8s.io/yaml and the API server's strict decoding do; larger text is machine-written
# (kubectl get, cluster dumps), where a key cannot come twice, and keeps the fast decoders.
SMALL_TEXT_BYTES: Final = 1 << 20


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
register_kind(st.PersistentVolume, api_version="v1", kind="PersistentVolume", namespaced=False)
register_kind(
    st.PersistentVolumeClaim, api_version="v1", kind="PersistentVolumeClaim", namespaced=True
)
for _cls, _namespaced in (
    (st.StorageClass, False),
    (st.CSINode, False),
    (st.CSIDriver, False),
    (st.CSIStorageCapacity, True),
):
    register_kind(_cls, api_version="storage.k8s.io/v1", kind=_cls.__name__, namespaced=_namespaced)


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
        and is_list(data.get("apiVersion"), data.get("kind"), "items" in data)
    ):
        raise ManifestError(f"{where}: expected one object, got a {data['kind']}")
    return decode_one(data, where, expected, None)


def registered_classes() -> list[type[msgspec.Struct]]:
    """The structs of every registered kind."""
    return list(_BY_CLASS)


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


def looks_like_json(text: str | bytes) -> bool:
    # As k8s.io/apimachinery's YAMLOrJSONDecoder sniffs: JSON starts with "{" (or here "[").
    if isinstance(text, bytes):
        return _JSON_START.match(text) is not None
    return _JSON_START_STR.match(text) is not None


def load_json(
    raw: bytes,
    source: str,
    out: list[Object],
    *,
    machine: bool | None = None,
    checked: bool = False,
) -> bool:
    """Decode JSON manifests into ``out``; False if ``raw`` is not JSON but may be YAML.
    ``machine``: whether the text is machine-written (``strict.machine_written``); by default,
    when it is large. ``checked``: ``check_json`` has made the field validation of the
    registered objects that decode straight into their structs (see there)."""
    raw = raw.removeprefix(b"\xef\xbb\xbf")
    with machine_written(len(raw) >= SMALL_TEXT_BYTES if machine is None else machine):
        return _load_json(raw, source, out, checked)


def check_json(raw: bytes) -> None:
    """The field validation ``load_json`` makes of each registered object in machine-written
    JSON ``raw`` (a List's items too), made alone: a forked worker's half of the parallel
    read (``yaml_workers``), whose other half, ``load_json(checked=True)``, decodes them.

    NOTE: made whether or not the object decodes into its struct (``load_json`` validates it
    only then, and goes down the slow path, which validates again, when it does not): a
    superset of ``load_json``'s checks, so text that passes both reads as it would alone, and
    anything either refuses makes the fast path decline. Objects of kinds nobody registered,
    and text that is not one such document, are left to ``load_json``, which checks them.
    """
    with machine_written(True):
        try:
            head = _HEAD_DECODER.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            return  # ``load_json`` says what it is
        _check_json(raw, head, None)


def _check_json(
    raw: bytes | msgspec.Raw, head: list[msgspec.Raw] | _Head, default: tuple[str, str] | None
) -> None:
    if isinstance(head, list):
        return
    api_version, kind, items = head.api_version, head.kind, head.items
    if kind is None and default is not None:
        api_version, kind = api_version or default[0], default[1]
    entry = _BY_GVK.get((api_version or "", kind or ""))
    if entry is not None:
        check_object(None, entry.api_version, entry.kind, entry.kind, raw=raw)
    elif items is not None and is_list(api_version, kind, True):
        item_default = _item_default(api_version, kind)
        for item in items:
            try:
                item_head = _ITEM_HEAD_DECODER.decode(item)
            except msgspec.ValidationError:
                continue
            _check_json(item, item_head, item_default)


def _load_json(raw: bytes, source: str, out: list[Object], checked: bool = False) -> bool:
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
            walk_root(msgspec.json.decode(raw), source, out)
        else:
            _walk_json(raw, head, source, None, out, checked)
    except UnicodeDecodeError:
        # msgspec checks the strings it decodes; name the first bad byte in the file.
        decode_utf8(raw, source)
        raise
    return True


def json_duplicates(raw: bytes) -> Any | None:
    """Small JSON parsed with each object whose keys came twice marked (``DuplicateKeys``), or
    None when no key came twice (or the text is large, not JSON, or field validation is off).

    NOTE: like rapidyaml, msgspec keeps the last of two equal keys without a word; the API
    server's strict decoding reports them (``duplicate field "spec.replicas"``). Large JSON is
    machine-written (kubectl get), where a key cannot come twice, and keeps msgspec's speed.
    """
    if len(raw) >= SMALL_TEXT_BYTES or current_mode() is FieldValidation.IGNORE:
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
    checked: bool = False,
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
            if not checked:
                where = _where(where, obj, entry)
                check_object(None, entry.api_version, entry.kind, where, raw=raw)
            out.append(obj)
            return
    elif items is not None and is_list(api_version, kind, True):
        if default is None:
            _check_type_meta({"apiVersion": head.api_version, "kind": head.kind}, where)
        item_default = _item_default(api_version, kind)
        for i, item in enumerate(items):
            _walk_json_item(item, f"{where}: items[{i}]", item_default, out, checked)
        return
    walk(msgspec.json.decode(raw), where, default, out)


def _walk_json_item(
    raw: msgspec.Raw,
    where: str,
    default: tuple[str, str] | None,
    out: list[Object],
    checked: bool = False,
) -> None:
    try:
        head = _ITEM_HEAD_DECODER.decode(raw)
    except msgspec.ValidationError:
        _walk_item(msgspec.json.decode(raw), where, default, out)
    else:
        _walk_json(raw, head, where, default, out, checked)


def _decoder(cls: type[msgspec.Struct]) -> msgspec.json.Decoder[Any]:
    decoder = _DECODERS.get(cls)
    if decoder is None:
        decoder = _DECODERS[cls] = msgspec.json.Decoder(cls)
    return decoder


# ---------------------------------------------------------------------------------------------
# Parsed data into objects


def is_list(api_version: Any, kind: Any, has_items: bool) -> bool:
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


def walk_root(data: Any, where: str, out: list[Object]) -> None:
    """A whole document of a manifest file: a manifest or a List. A sequence is refused, as
    kubectl refuses it (it cannot decode an array as an object)."""
    if isinstance(data, list):
        raise ManifestError(f"{where}: {_SEQUENCE_DOCUMENT}")
    walk(data, where, None, out)


def walk(data: Any, where: str, default: tuple[str, str] | None, out: list[Object]) -> None:
    if data is None:
        return  # an empty YAML document, as kubectl skips it
    if isinstance(data, list):
        for i, item in enumerate(data):
            if item is None:
                raise ManifestError(f"{where}[{i}]: expected an object (a mapping), got null")
            walk(item, f"{where}[{i}]", None, out)
        return
    if isinstance(data, dict) and is_list(
        data.get("apiVersion"), data.get("kind"), "items" in data
    ):
        if default is None:
            # kubectl looks at a List's apiVersion and kind as at any document's.
            _check_type_meta(data, where)
        items = data["items"]
        if items is None:
            return
        if not isinstance(items, list):
            raise ManifestError(f"{where}: items: expected a list, got {render(items)}")
        item_default = _item_default(data["apiVersion"], data["kind"])
        for i, item in enumerate(items):
            _walk_item(item, f"{where}: items[{i}]", item_default, out)
        return
    out.append(decode_one(data, where, None, default))


def _walk_item(data: Any, where: str, default: tuple[str, str] | None, out: list[Object]) -> None:
    """One item of a List: an object, never a null or a sequence (read as nothing, or as
    more objects, in silence), as kubectl's decoding of a List's items refuses them."""
    if data is None or isinstance(data, list):
        raise ManifestError(f"{where}: expected an object (a mapping), got {render(data)}")
    walk(data, where, default, out)


def decode_one(
    data: Any, where: str, expected: type[msgspec.Struct] | None, default: tuple[str, str] | None
) -> Object:
    if not isinstance(data, dict):
        raise ManifestError(f"{where}: expected an object (a mapping), got {render(data)}")
    api_version = data.get("apiVersion")
    kind = data.get("kind")
    if expected is None and default is None:
        _check_type_meta(data, where)
    for field, value in (("kind", kind), ("apiVersion", api_version)):
        if value is not None and not isinstance(value, str):
            raise ManifestError(f"{where}: {field}: expected a string, got {render(value)}")
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
    if found is None and unserved(api_version, kind):
        raise ManifestError(
            f"{where} ({_label(data, kind, False)}): "
            f'no matches for kind "{kind}" in version "{api_version}"'
        )
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
        cleaned = clean(data, type_info(entry.cls))
        try:
            obj = msgspec.convert(cleaned, entry.cls)
        except msgspec.ValidationError as err:
            label = _label(data, entry.kind, entry.namespaced)
            said = (
                decode_error(data, entry.api_version, entry.kind)
                or go_type_error(err, cleaned, entry.cls)
                or explain(err, cleaned)
            )
            raise ManifestError(f"{where} ({label}): {said}") from err
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


_STOP_VALIDATE: Final = (
    "if you choose to ignore these errors, turn validation off with --validate=false"
)


def _check_type_meta(data: dict[str, Any], where: str) -> None:
    """kubectl's look at a document's apiVersion and kind before anything else reads it.

    Under ``--validate`` strict or warn its client-side schema check refuses a document whose
    apiVersion or kind is absent (or null) or not a string, all problems in one aggregate;
    under ignore the decoder refuses a document without a kind, quoting it as JSON.

    Upstream: getObjectKind (kubectl pkg/validation/schema.go), ValidateSchema and
    StreamVisitor.Visit (cli-runtime pkg/resource/visitor.go), NewMissingKindErr
    (apimachinery pkg/runtime/error.go), v1.35
    """
    api_version, kind = data.get("apiVersion"), data.get("kind")
    if current_mode() is not FieldValidation.IGNORE:
        problems = [
            f"{field} not set" if value is None else f"{field} isn't string type"
            for field, value in (("apiVersion", api_version), ("kind", kind))
            if not isinstance(value, str)
        ]
        if problems:
            text = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
            raise ManifestError(
                f"{where}{_name_label(data, kind)}: error validating data: {text}; "
                + _STOP_VALIDATE
            )
    if not isinstance(kind, str) or not kind:
        # yaml.ToJSON: map keys sorted, as encoding/json writes Go maps.
        raise ManifestError(
            f"{where}{_name_label(data, None)}: Object 'Kind' is missing in "
            f"'{go_json(_sorted_json(data))}'"
        )


def _sorted_json(value: Any) -> JSONable:
    if isinstance(value, dict):
        return {str(k): _sorted_json(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, list):
        return [_sorted_json(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def _name_label(data: dict[str, Any], kind: object) -> str:
    """`` (Node n1)`` with a usable kind, `` (name "n1")`` without one, or nothing."""
    if isinstance(kind, str) and kind:
        return f" ({_label(data, kind, False)})"
    meta = data.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return f' (name "{name}")' if isinstance(name, str) and name else ""


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
