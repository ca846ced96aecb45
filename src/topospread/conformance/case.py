"""Conformance cases (../shared/conformance/FORMAT.md): one cluster, one pod, what upstream decides.

A case is parsed once into typed objects; every manifest inside it goes through the same loader
as user manifests, so a malformed case fails with the file, the object and the field named.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from topospread.api.loader import decode_object, read_yaml_documents
from topospread.api.spread_validation import decode_pod_topology_spread_args
from topospread.api.types import (
    Node,
    Pod,
    PodTopologySpreadArgs,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
)
from topospread.errors import ManifestError

OwnerObject = Service | ReplicationController | ReplicaSet | StatefulSet

_CASE_KEYS = frozenset(
    {
        "name",
        "source",
        "args",
        "features",
        "objects",
        "nodes",
        "pods",
        "pod",
        "filteredNodes",
        "expect",
    }
)
_EXPECT_KEYS = frozenset({"preFilter", "filter", "preScore", "score", "domains"})
_DOMAIN_KEYS = frozenset({"topologyKey", "counts", "globalMin"})


@dataclass(frozen=True, slots=True)
class Case:
    """One parsed conformance case."""

    path: str
    name: str
    source: str
    args: PodTopologySpreadArgs
    features: Mapping[str, object]
    objects: Sequence[OwnerObject]
    nodes: Sequence[Node]
    pods: Sequence[Pod]
    pod: Pod
    filtered_nodes: Sequence[str] | None
    expect: Mapping[str, Any] | None = field(default=None)


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ManifestError(f"{where}: expected a mapping, got {_kind_of(value)}")
    return value


def _sequence(value: Any, where: str) -> Sequence[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ManifestError(f"{where}: expected a list, got {_kind_of(value)}")
    return value


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "a mapping"


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ManifestError(f"{where}: expected a string, got {_kind_of(value)}")
    return value


def _integer(value: Any, where: str) -> int:
    # YAML's true and false are no counts, though Python's bool is an int.
    if isinstance(value, bool) or not isinstance(value, int):
        raise ManifestError(f"{where}: expected an integer, got {_kind_of(value)}")
    return value


def _code(value: Any, where: str, codes: tuple[str, ...]) -> None:
    """A status code, one of ``codes`` (FORMAT.md's for the key)."""
    if _string(value, where) not in codes:
        supported = ", ".join(f'"{c}"' for c in codes)
        raise ManifestError(f'{where}: Unsupported value: "{value}": supported values: {supported}')


# The status codes each expected result may hold (FORMAT.md).
_PRE_FILTER_CODES: Final = ("Success", "Skip", "UnschedulableAndUnresolvable", "Error")
_FILTER_CODES: Final = ("Success", "Unschedulable", "UnschedulableAndUnresolvable")
_PRE_SCORE_CODES: Final = ("Success", "Skip")


def _decode_args(data: Any, where: str) -> PodTopologySpreadArgs:
    """A case's args, decoded as a profile's are (strictly, a value of the wrong type the Go
    decoder's error), defaulted and validated."""
    if data is None:
        return PodTopologySpreadArgs()
    return decode_pod_topology_spread_args(_mapping(data, where), where)


def parse_case(data: Any, path: str) -> Case:
    """Build a Case from a parsed YAML document; raises ManifestError naming file and field."""
    doc = _mapping(data, path)
    unknown = sorted(set(doc) - _CASE_KEYS)
    if unknown:
        raise ManifestError(
            f"{path}: unknown key {unknown[0]!r}; a case's keys are {', '.join(sorted(_CASE_KEYS))}"
        )
    if "pod" not in doc:
        raise ManifestError(f"{path}: pod: Required value: a case needs the incoming pod")
    objects: list[OwnerObject] = []
    for i, raw in enumerate(_sequence(doc.get("objects"), f"{path}: objects")):
        obj = decode_object(raw, None, f"{path}: objects[{i}]")
        if not isinstance(obj, Service | ReplicationController | ReplicaSet | StatefulSet):
            raise ManifestError(
                f"{path}: objects[{i}]: kind: Unsupported value: {getattr(obj, 'kind', '?')!r}: "
                "supported values: Service, ReplicationController, ReplicaSet, StatefulSet"
            )
        objects.append(obj)
    nodes = [
        decode_object(raw, Node, f"{path}: nodes[{i}]")
        for i, raw in enumerate(_sequence(doc.get("nodes"), f"{path}: nodes"))
    ]
    names = [n.metadata.name for n in nodes]
    for i, name in enumerate(names):
        if not name:
            raise ManifestError(f"{path}: nodes[{i}]: metadata.name: Required value")
        if name in names[:i]:
            raise ManifestError(f'{path}: nodes[{i}]: metadata.name: Duplicate value: "{name}"')
    known = set(names)
    pods = []
    for i, raw in enumerate(_sequence(doc.get("pods"), f"{path}: pods")):
        pod = decode_object(raw, Pod, f"{path}: pods[{i}]")
        where = f"{path}: pods[{i}] ({pod.metadata.namespace}/{pod.metadata.name})"
        if not pod.spec.node_name:
            raise ManifestError(
                f"{where}: spec.nodeName: Required value: existing pods must be bound to a node"
            )
        if pod.spec.node_name not in known:
            raise ManifestError(
                f'{where}: spec.nodeName: Not found: "{pod.spec.node_name}": '
                "no such node in the case"
            )
        pods.append(pod)
    pod = decode_object(doc["pod"], Pod, f"{path}: pod")
    filtered: list[str] | None = None
    if doc.get("filteredNodes") is not None:
        filtered = []
        for i, name in enumerate(_sequence(doc["filteredNodes"], f"{path}: filteredNodes")):
            if not isinstance(name, str) or name not in known:
                raise ManifestError(
                    f"{path}: filteredNodes[{i}]: Not found: {name!r} is not a node of the case"
                )
            filtered.append(name)
    features = doc.get("features")
    features = {} if features is None else _mapping(features, f"{path}: features")
    expect = doc.get("expect")
    if expect is not None:
        expect = _mapping(expect, f"{path}: expect")
        unknown = sorted(set(expect) - _EXPECT_KEYS)
        if unknown:
            raise ManifestError(
                f"{path}: expect: unknown key {unknown[0]!r}; its keys are "
                + ", ".join(sorted(_EXPECT_KEYS))
            )
        _check_expect(expect, known, f"{path}: expect")
    for key in ("name", "source"):
        if doc.get(key) is not None:
            _string(doc[key], f"{path}: {key}")
    return Case(
        path=path,
        name=doc.get("name") or path,
        source=doc.get("source") or "",
        args=_decode_args(doc.get("args"), f"{path}: args"),
        features=features,
        objects=objects,
        nodes=nodes,
        pods=pods,
        pod=pod,
        filtered_nodes=filtered,
        expect=expect,
    )


def _check_expect(expect: Mapping[str, Any], nodes: set[str], where: str) -> None:
    """What ``expect`` names must exist: its per-node results name nodes of the case, and each
    ``domains`` entry has only the keys FORMAT.md gives (a misspelled one would otherwise fail
    the comparison instead of being refused)."""
    for key, codes in (("preFilter", _PRE_FILTER_CODES), ("preScore", _PRE_SCORE_CODES)):
        if expect.get(key) is not None:
            _code(expect[key], f"{where}.{key}", codes)
    for key in ("filter", "score"):
        per_node = expect.get(key)
        if per_node is None:
            continue
        for name, want in _mapping(per_node, f"{where}.{key}").items():
            if name not in nodes:
                raise ManifestError(f"{where}.{key}: Not found: {name!r} is not a node of the case")
            if key == "filter":
                _code(want, f"{where}.{key}.{name}", _FILTER_CODES)
            else:
                _integer(want, f"{where}.{key}.{name}")
    for i, domain in enumerate(_sequence(expect.get("domains"), f"{where}.domains")):
        here = f"{where}.domains[{i}]"
        unknown = sorted(str(k) for k in _mapping(domain, here) if k not in _DOMAIN_KEYS)
        if unknown:
            keys = ", ".join(sorted(_DOMAIN_KEYS))
            raise ManifestError(f"{here}: unknown key {unknown[0]!r}; its keys are {keys}")
        if domain.get("topologyKey") is not None:
            _string(domain["topologyKey"], f"{here}.topologyKey")
        if domain.get("globalMin") is not None:
            _integer(domain["globalMin"], f"{here}.globalMin")
        if domain.get("counts") is not None:
            for value, count in _mapping(domain["counts"], f"{here}.counts").items():
                _integer(count, f"{here}.counts.{value}")


def load_case(path: Path) -> Case:
    """Read and parse one case file."""
    docs = read_yaml_documents(path)
    if len(docs) != 1:
        raise ManifestError(
            f"{path}: a case file holds exactly one YAML document, found {len(docs)}"
        )
    return parse_case(docs[0], str(path))


def iter_case_files(paths: Sequence[Path]) -> Iterator[Path]:
    """The case files named, directories searched recursively for *.yaml and *.yml, sorted."""
    for path in paths:
        if path.is_dir():
            found = sorted(
                p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file()
            )
            yield from found
        elif path.exists():
            yield path
        else:
            raise ManifestError(f"{path}: no such file or directory")


__all__ = ["Case", "iter_case_files", "load_case", "parse_case"]
