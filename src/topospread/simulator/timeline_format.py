"""The what-if timeline format: a cluster, its workloads, and a list of steps.

A timeline scenario is one YAML/JSON mapping::

    nodes: [...]        # Node manifests
    nodeGroups: [...]   # {name, zones: [..], perZone: N | {zone: N}, count: N, template, zoneKey}
    objects: [...]      # any manifests: Deployments, ReplicaSets, StatefulSets, DaemonSets,
                        # Jobs, Pods, Services, PriorityClasses, PodDisruptionBudgets, Namespaces
    config: {...}       # optional KubeSchedulerConfiguration
    timeline: [...]     # steps: {name?: str, <action>: args}

This module reads and checks the document (``load_timeline``, ``parse_timeline``); the state it
describes lives in simulator/simulation.py and the steps are carried out by simulator/steps.py.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import msgspec

from topospread.api.loader import (
    decode_manifests,
    decode_object,
    read_yaml_documents,
)
from topospread.api.types import (
    LABEL_ARCH_STABLE,
    LABEL_INSTANCE_TYPE_STABLE,
    LABEL_OS_STABLE,
    LABEL_TOPOLOGY_ZONE,
    Node,
)
from topospread.errors import ManifestError
from topospread.framework.config import SchedulerConfig, decode_config, default_config
from topospread.simulator.clock import DurationError, parse_duration
from topospread.simulator.drain import OPTION_FLAGS, DrainOptions
from topospread.simulator.scenario import list_of

_KEYS: Final = frozenset({"nodes", "nodeGroups", "objects", "config", "timeline"})
_GROUP_KEYS: Final = frozenset({"name", "zones", "perZone", "count", "template", "zoneKey"})

_EFFECTS: Final = ("NoSchedule", "PreferNoSchedule", "NoExecute")

# What a node group's template gets unless it says otherwise: what the kubelet and a cloud
# provider put on every real node (a template without capacity gets DEFAULT_CAPACITY whole).
# The hostname, zone and region labels are each node's own (Simulation.add_group_nodes).
DEFAULT_NODE_LABELS: Final[Mapping[str, str]] = {
    LABEL_OS_STABLE: "linux",
    LABEL_ARCH_STABLE: "amd64",
}
DEFAULT_CAPACITY: Final[Mapping[str, str]] = {
    "cpu": "4",
    "memory": "16Gi",
    "ephemeral-storage": "100Gi",
    "pods": "110",
}
# Always there on a real node, whatever else the template gives.
_NODE_RESOURCES: Final = ("ephemeral-storage", "pods")
# A cloud zone's region: us-east-1a -> us-east-1, europe-west1-b -> europe-west1,
# eastus-1 -> eastus; DEFAULT_REGION for zones named otherwise (a, b, c).
DEFAULT_REGION: Final = "region-1"
_ZONE_SUFFIX: Final = re.compile(r"(?:(?<=\d)[a-z]|-[a-z0-9])$")

ACTIONS: Final = (
    "apply",
    "scale",
    "rollout",
    "cordon",
    "uncordon",
    "drain",
    "taint",
    "untaint",
    "addNodes",
    "removeNode",
    "loseZone",
    "restoreZone",
    "loseNode",
    "restoreNode",
    "deletePods",
    "wait",
    "rebalance",
)

# The rebalance step's options (analysis/rebalance.py reads them): key -> expected type.
REBALANCE_OPTIONS: Final[Mapping[str, type]] = {
    "includeSoft": bool,
    "namespaces": list,
    "excludeNamespaces": list,
    "selector": str,
    "evictLocalStorage": bool,
    "maxEvictions": int,
    "maxReplays": int,
}


# ---------------------------------------------------------------------------------------------
# The scenario document


@dataclass(frozen=True, slots=True)
class NodeGroup:
    """Nodes stamped from one template: ``<name>-<zone>-<i>`` per zone, or ``<name>-<i>``."""

    name: str
    template: Node
    zones: tuple[str, ...]
    per_zone: Mapping[str, int]
    count: int
    zone_key: str = LABEL_TOPOLOGY_ZONE


@dataclass(frozen=True, slots=True)
class Step:
    """One timeline entry: ``action`` with its raw ``args``; ``where`` names it in errors."""

    index: int
    name: str
    action: str
    args: Any
    where: str


@dataclass(slots=True)
class TimelineScenario:
    """A parsed timeline scenario (objects decoded, steps checked for shape)."""

    source: str
    nodes: list[tuple[str, Node]]
    groups: dict[str, NodeGroup]
    objects: list[tuple[str, Any]]
    config: SchedulerConfig
    steps: list[Step]
    warnings: list[str] = field(default_factory=list)


def load_timeline(path: Path) -> TimelineScenario:
    """Read and check a timeline scenario; errors name the file, the entry and the field."""
    source = str(path)
    docs = read_yaml_documents(path)
    if len(docs) != 1 or not isinstance(docs[0], Mapping):
        raise ManifestError(
            f"{source}: a timeline scenario is one mapping with keys "
            "nodes, nodeGroups, objects, config, timeline"
        )
    return parse_timeline(docs[0], source)


def parse_timeline(doc: Mapping[str, Any], source: str) -> TimelineScenario:
    unknown = sorted(set(doc) - _KEYS)
    if unknown:
        raise ManifestError(
            f"{source}: unknown key {unknown[0]!r}; a timeline scenario has "
            "nodes, nodeGroups, objects, config, timeline"
        )
    nodes = [
        (f"{source}: nodes[{i}]", decode_object(raw, Node, f"{source}: nodes[{i}]"))
        for i, raw in enumerate(list_of(doc, "nodes", source))
    ]
    groups: dict[str, NodeGroup] = {}
    for i, raw in enumerate(list_of(doc, "nodeGroups", source, "node groups")):
        group = _parse_group(raw, f"{source}: nodeGroups[{i}]")
        if group.name in groups:
            raise ManifestError(f'{source}: nodeGroups[{i}]: name: Duplicate value: "{group.name}"')
        groups[group.name] = group
    objects: list[tuple[str, Any]] = []
    for i, raw in enumerate(list_of(doc, "objects", source)):
        where = f"{source}: objects[{i}]"
        objects.extend((where, obj) for obj in decode_manifests(raw, where))
    raw_config = doc.get("config")
    config = decode_config(raw_config, f"{source}: config") if raw_config else default_config()
    steps = [
        parse_step(raw, i, source)
        for i, raw in enumerate(list_of(doc, "timeline", source, "steps"))
    ]
    return TimelineScenario(source, nodes, groups, objects, config, steps)


def with_cluster(
    scenario: TimelineScenario, objects: Iterable[tuple[str, Any]]
) -> TimelineScenario:
    """The timeline replayed on a given cluster: ``objects`` (each with where it came from: a
    saved ``kubectl get`` file or a live cluster) come before the scenario's own nodes and
    objects, so its bound pods keep their nodes and its workloads adopt their pods."""
    nodes: list[tuple[str, Node]] = []
    rest: list[tuple[str, Any]] = []
    for where, obj in objects:
        (nodes if isinstance(obj, Node) else rest).append((where, obj))
    return dataclasses.replace(
        scenario, nodes=[*nodes, *scenario.nodes], objects=[*rest, *scenario.objects]
    )


def _parse_group(raw: Any, where: str) -> NodeGroup:
    if not isinstance(raw, Mapping):
        raise ManifestError(f"{where}: expected a mapping with name, zones, perZone or count")
    unknown = sorted(set(raw) - _GROUP_KEYS)
    if unknown:
        raise ManifestError(
            f"{where}: {unknown[0]}: unknown field; a node group has "
            "name, zones, perZone, count, template, zoneKey"
        )
    name = raw.get("name")
    if name is None or name == "":
        raise ManifestError(f"{where}: name: Required value: a node group needs a name")
    if not isinstance(name, str):
        # YAML 1.1, as Kubernetes reads it, makes y, n, yes, no, on and off booleans.
        raise ManifestError(
            f"{where}: name: Invalid value: {json.dumps(name)}: expected a string "
            "(quote it in YAML)"
        )
    template = with_node_defaults(
        decode_object(raw.get("template") or {}, Node, f"{where}: template")
    )
    zones = raw.get("zones") or []
    if not isinstance(zones, list) or not all(isinstance(z, str) and z for z in zones):
        raise ManifestError(f"{where}: zones: expected a list of zone names")
    per_zone_raw = raw.get("perZone", 0 if "count" in raw else 1)
    per_zone: dict[str, int]
    if isinstance(per_zone_raw, Mapping):
        per_zone = {}
        for zone, n in per_zone_raw.items():
            if zone not in zones:
                raise ManifestError(f"{where}: perZone.{zone}: zone not listed in zones")
            per_zone[str(zone)] = _count(n, f"{where}: perZone.{zone}")
    else:
        n = _count(per_zone_raw, f"{where}: perZone")
        per_zone = {zone: n for zone in zones}
    count = _count(raw.get("count", 0), f"{where}: count")
    if zones and count:
        raise ManifestError(f"{where}: count: Forbidden: give zones with perZone, or count alone")
    zone_key = raw.get("zoneKey", LABEL_TOPOLOGY_ZONE)
    if not isinstance(zone_key, str) or not zone_key:
        raise ManifestError(f"{where}: zoneKey: expected a label key")
    return NodeGroup(name, template, tuple(zones), per_zone, count, zone_key)


def with_node_defaults(template: Node) -> Node:
    """A node group's template as a real node looks: the os and arch labels, an instance type
    named after its CPU and memory, ``ephemeral-storage`` and ``pods`` in capacity and
    allocatable (DEFAULT_CAPACITY whole when it gives neither); the template's own labels and
    resources win. Allocatable defaults to capacity and capacity to allocatable, key by key.
    """
    status = template.status
    capacity, allocatable = dict(status.capacity), dict(status.allocatable)
    if not capacity and not allocatable:
        capacity = dict(DEFAULT_CAPACITY)
    extra = {k: DEFAULT_CAPACITY[k] for k in _NODE_RESOURCES}
    capacity, allocatable = (
        {**extra, **allocatable, **capacity},
        {**extra, **capacity, **allocatable},
    )
    labels = {**DEFAULT_NODE_LABELS, **template.metadata.labels}
    if LABEL_INSTANCE_TYPE_STABLE not in labels and "cpu" in capacity and "memory" in capacity:
        labels[LABEL_INSTANCE_TYPE_STABLE] = f"{capacity['cpu']}cpu-{capacity['memory']}"
    return msgspec.structs.replace(
        template,
        metadata=msgspec.structs.replace(template.metadata, labels=labels),
        status=msgspec.structs.replace(status, capacity=capacity, allocatable=allocatable),
    )


def region_of(zone: str) -> str:
    """The region of a zone named as clouds name them (its last letter or ``-x`` suffix
    dropped); DEFAULT_REGION when the name says nothing more."""
    region = _ZONE_SUFFIX.sub("", zone)
    return region if region and region != zone else DEFAULT_REGION


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ManifestError(f"{where}: Invalid value: {value!r}: expected a count (0 or more)")
    return value


def parse_step(raw: Any, index: int, source: str) -> Step:
    where = f"{source}: timeline[{index}]"
    if not isinstance(raw, Mapping):
        raise ManifestError(f"{where}: expected a mapping {{name?: str, <action>: args}}")
    name = raw.get("name", "")
    if not isinstance(name, str):
        raise ManifestError(f"{where}: name: expected a string")
    actions = [k for k in raw if k != "name"]
    if len(actions) != 1:
        found = ", ".join(map(str, actions)) or "none"
        raise ManifestError(
            f"{where}: expected exactly one action ({', '.join(ACTIONS)}); found {found}"
        )
    action = str(actions[0])
    if action not in ACTIONS:
        raise ManifestError(
            f"{where}: {action}: unknown action; the actions are {', '.join(ACTIONS)}"
        )
    step = Step(index, name, action, raw[action], f"{where} ({action})")
    _check_args(step)
    return step


def _check_args(step: Step) -> None:
    """Shape checks that need no cluster state; references are resolved when the step runs."""
    a, where = step.args, step.where
    if step.action == "apply":
        if not isinstance(a, (list, Mapping)):
            raise ManifestError(f"{where}: expected a manifest or a list of manifests")
    elif step.action == "scale":
        _mapping(a, where, required=("workload", "replicas"), allowed=("workload", "replicas"))
        _count(a["replicas"], f"{where}: replicas")
    elif step.action == "rollout":
        _mapping(a, where, required=("workload",), allowed=("workload", "patch", "template"))
        if ("patch" in a) == ("template" in a):
            raise ManifestError(f"{where}: give exactly one of patch (merged) or template")
        body = a.get("patch", a.get("template"))
        if not isinstance(body, Mapping):
            raise ManifestError(
                f"{where}: {'patch' if 'patch' in a else 'template'}: expected a mapping"
            )
    elif step.action == "drain":
        drain_args(a, where)
    elif step.action in ("cordon", "uncordon", "removeNode", "loseNode", "restoreNode"):
        names_arg(a, where)
    elif step.action in ("taint", "untaint"):
        _mapping(
            a,
            where,
            required=("key",) + (("effect",) if step.action == "taint" else ()),
            allowed=("node", "nodes", "zone", "zoneKey", "key", "value", "effect"),
        )
        if sum(k in a for k in ("node", "nodes", "zone")) != 1:
            raise ManifestError(f"{where}: give exactly one of node, nodes or zone")
        effect = a.get("effect")
        if effect is not None and effect not in _EFFECTS:
            raise ManifestError(
                f'{where}: effect: Unsupported value: "{effect}": supported values: '
                + ", ".join(f'"{e}"' for e in _EFFECTS)
            )
    elif step.action == "addNodes":
        _mapping(a, where, required=("group",), allowed=("group", "zone", "count"))
        _count(a.get("count", 1), f"{where}: count")
    elif step.action in ("loseZone", "restoreZone"):
        if isinstance(a, Mapping):
            _mapping(a, where, required=("zone",), allowed=("zone", "zoneKey"))
        elif not isinstance(a, str) or not a:
            raise ManifestError(f"{where}: expected a zone name or {{zone, zoneKey}}")
    elif step.action == "deletePods":
        names_arg(a, where)
    elif step.action == "wait":
        wait_args(a, where)
    elif step.action == "rebalance":
        rebalance_args(a, where)


def rebalance_args(a: Any, where: str) -> Mapping[str, Any]:
    """``rebalance``: ``{}`` (or nothing), or some of REBALANCE_OPTIONS."""
    if a is None:
        return {}
    _mapping(a, where, required=(), allowed=tuple(REBALANCE_OPTIONS))
    for key, value in a.items():
        kind = REBALANCE_OPTIONS[key]
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if kind is list:
            ok = ok and all(isinstance(v, str) for v in value)
        if kind is int:
            ok = ok and value >= 1
        if not ok:
            expected = {bool: "true or false", list: "a list of names", str: "a string"}.get(
                kind, "a whole number, 1 or more"
            )
            raise ManifestError(
                f"{where}: {key}: Invalid value: {json.dumps(value)}: expected {expected}"
            )
    return dict(a)


def wait_args(a: Any, where: str) -> int:
    """``wait``: a Go duration, not negative (the clock only moves on); nanoseconds."""
    expected = "expected a duration such as 90s, 5m or 1h30m"
    if not isinstance(a, str):
        raise ManifestError(f"{where}: wait: Invalid value: {json.dumps(a)}: {expected}")
    try:
        nanos = parse_duration(a)
    except DurationError as err:
        raise ManifestError(f'{where}: wait: Invalid value: "{a}": {err}; {expected}') from err
    if nanos < 0:
        raise ManifestError(
            f'{where}: wait: Invalid value: "{a}": must not be negative (the clock only moves on)'
        )
    return nanos


def _mapping(a: Any, where: str, *, required: Sequence[str], allowed: Sequence[str]) -> None:
    if not isinstance(a, Mapping):
        with_keys = f" with {', '.join(required)}" if required else ""
        raise ManifestError(f"{where}: expected a mapping{with_keys}")
    for key in a:
        if key not in allowed:
            raise ManifestError(f"{where}: {key}: unknown field; expected {', '.join(allowed)}")
    for key in required:
        if key not in a:
            raise ManifestError(f"{where}: {key}: Required value")


def drain_args(a: Any, where: str) -> tuple[list[str], DrainOptions]:
    """``drain``: node names, or ``{node | nodes, force?, disableEviction?,
    deleteEmptyDirData?}`` (kubectl drain's --force, --disable-eviction and
    --delete-emptydir-data)."""
    if not isinstance(a, Mapping):
        return names_arg(a, where), DrainOptions()
    _mapping(a, where, required=(), allowed=("node", "nodes", *OPTION_FLAGS))
    if ("node" in a) == ("nodes" in a):
        raise ManifestError(f"{where}: give exactly one of node or nodes")
    names = names_arg(a["node"] if "node" in a else a["nodes"], where)
    for key in OPTION_FLAGS:
        if key in a and not isinstance(a[key], bool):
            raise ManifestError(
                f"{where}: {key}: Invalid value: {json.dumps(a[key])}: expected true or false "
                f"(kubectl drain {OPTION_FLAGS[key]})"
            )
    options = DrainOptions(
        force=a.get("force", False),
        disable_eviction=a.get("disableEviction", False),
        delete_emptydir_data=a.get("deleteEmptyDirData", False),
    )
    return names, options


def names_arg(a: Any, where: str) -> list[str]:
    names = [a] if isinstance(a, str) else a
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
        raise ManifestError(f"{where}: expected a name or a list of names")
    return list(names)


__all__ = [
    "ACTIONS",
    "NodeGroup",
    "Step",
    "TimelineScenario",
    "drain_args",
    "load_timeline",
    "names_arg",
    "parse_step",
    "parse_timeline",
    "region_of",
    "wait_args",
    "with_cluster",
    "with_node_defaults",
]
