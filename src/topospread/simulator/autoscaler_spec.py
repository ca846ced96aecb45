"""A timeline scenario's ``autoscaler:`` section: one of ``clusterAutoscaler`` or ``karpenter``.

::

    autoscaler:
      nodeStartupDelay: 1m            # a new node is NotReady (starting up) this long
      clusterAutoscaler:
        options: {scan-interval: 10s, balance-similar-node-groups: true}  # upstream flag names
        nodeGroups:
        - {nodeGroup: web, minSize: 0, maxSize: 10}      # a scenario nodeGroups entry
        - {nodeGroup: big, maxSize: 3, multiZone: true}  # one group over all its zones
        - {name: gpu, maxSize: 2, zones: [zone-a], template: {...}}  # declared in place

    autoscaler:
      karpenter:
        nodePools: [...]              # NodePool manifests or bare specs with a name
        catalogue: types.yaml         # instance types (relative to the scenario file)
        batchIdleDuration: 1s
        batchMaxDuration: 10s

cluster-autoscaler options keep the flags' own spelling (``scan-interval``), as its command
line and its parser (autoscaler/clusterautoscaler/options.py) do. A scenario node group spread
over N zones becomes N cluster-autoscaler groups, ``<group>-<zone>``, one per zone as AWS
ASGs and AKS node pools are usually laid out, unless ``multiZone: true`` makes it one group.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from topospread.api.types import (
    LABEL_TOPOLOGY_REGION,
    LABEL_TOPOLOGY_ZONE,
    Node,
    NodeStatus,
    ObjectMeta,
)
from topospread.autoscaler.clusterautoscaler import AutoscalingOptions, NodeGroup, parse_options
from topospread.autoscaler.clusterautoscaler.nodegroup import NODE_GROUP_LABEL, parse_node_group
from topospread.autoscaler.clusterautoscaler.options import parse_go_duration
from topospread.autoscaler.karpenter import (
    InstanceType,
    NodePool,
    load_catalogue,
    parse_nodepools,
)
from topospread.errors import ManifestError
from topospread.simulator.node_groups import NodeGroup as ScenarioGroup
from topospread.simulator.node_groups import region_of, with_node_defaults

NANOS: Final = 1_000_000_000
_TOP_KEYS: Final = ("nodeStartupDelay", "clusterAutoscaler", "karpenter")
_CA_KEYS: Final = ("options", "nodeGroups")
_REF_KEYS: Final = ("nodeGroup", "minSize", "maxSize", "multiZone")
_KARPENTER_KEYS: Final = ("nodePools", "catalogue", "batchIdleDuration", "batchMaxDuration")
# Upstream: Karpenter's BATCH_IDLE_DURATION (1s) and BATCH_MAX_DURATION (10s) defaults
# (pkg/operator/options), and the disruption controller's poll period (10s).
BATCH_IDLE_DURATION: Final = 1.0
BATCH_MAX_DURATION: Final = 10.0
DISRUPTION_POLL: Final = 10.0
# How long a new node stays NotReady before its kubelet posts Ready (topospread's own).
DEFAULT_STARTUP_DELAY: Final = 60.0


@dataclass(frozen=True, slots=True)
class GroupBinding:
    """One cluster-autoscaler node group and where its nodes come from: a scenario node group
    (``source``; new nodes are named as its nodes are) or its own template; the zones it
    launches in and the label that names them."""

    group: NodeGroup
    source: str = ""
    zones: tuple[str, ...] = ()
    zone_key: str = LABEL_TOPOLOGY_ZONE


@dataclass(frozen=True, slots=True)
class ClusterAutoscalerSpec:
    options: AutoscalingOptions
    groups: tuple[GroupBinding, ...]
    startup_delay: float = DEFAULT_STARTUP_DELAY

    def labels_for(self, source: str, zone: str) -> dict[str, str]:
        """The node-group label a scenario group's node in ``zone`` carries (none when that
        group is not autoscaled)."""
        for b in self.groups:
            if b.source == source and (zone in b.zones or not b.zones):
                return {NODE_GROUP_LABEL: b.group.name}
        return {}


@dataclass(frozen=True, slots=True)
class KarpenterSpec:
    pools: tuple[NodePool, ...]
    catalogue: tuple[InstanceType, ...] | None = None
    batch_idle: float = BATCH_IDLE_DURATION
    batch_max: float = BATCH_MAX_DURATION
    startup_delay: float = DEFAULT_STARTUP_DELAY

    def labels_for(self, source: str, zone: str) -> dict[str, str]:
        return {}


AutoscalerSpec = ClusterAutoscalerSpec | KarpenterSpec


def _mapping(raw: object, where: str, keys: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        raise ManifestError(f"{where}: expected a mapping with {', '.join(keys)}")
    unknown = sorted(str(k) for k in raw if k not in keys)
    if unknown:
        raise ManifestError(f"{where}: {unknown[0]}: unknown field; expected {', '.join(keys)}")
    return raw


def _seconds(raw: Mapping[str, Any], key: str, default: float, where: str) -> float:
    if key not in raw:
        return default
    value = raw[key]
    try:
        if not isinstance(value, str):
            raise ValueError(value)
        seconds = parse_go_duration(value)
        if seconds < 0:
            raise ValueError(value)
    except ValueError:
        raise ManifestError(
            f'{where}: {key}: Invalid value: {value!r}: expected a duration such as "1s" or "1m"'
        ) from None
    return seconds


def parse_autoscaler(
    raw: object, where: str, scenario_groups: Mapping[str, ScenarioGroup], base: Path
) -> AutoscalerSpec:
    """The ``autoscaler:`` section; errors name ``where`` (``file: autoscaler``) and the field."""
    a = _mapping(raw, where, _TOP_KEYS)
    kinds = [k for k in ("clusterAutoscaler", "karpenter") if k in a]
    if len(kinds) != 1:
        raise ManifestError(f"{where}: give exactly one of clusterAutoscaler or karpenter")
    delay = _seconds(a, "nodeStartupDelay", DEFAULT_STARTUP_DELAY, where)
    if kinds[0] == "clusterAutoscaler":
        return _parse_ca(
            a["clusterAutoscaler"], f"{where}.clusterAutoscaler", scenario_groups, delay
        )
    return _parse_karpenter(a["karpenter"], f"{where}.karpenter", delay, base)


def _parse_ca(
    raw: object, where: str, scenario_groups: Mapping[str, ScenarioGroup], delay: float
) -> ClusterAutoscalerSpec:
    a = _mapping(raw, where, _CA_KEYS)
    options = parse_options(a.get("options"), f"{where}.options")
    entries = a.get("nodeGroups")
    if not isinstance(entries, list) or not entries:
        raise ManifestError(f"{where}: nodeGroups: Required value: a list of node groups")
    out: list[GroupBinding] = []
    for i, entry in enumerate(entries):
        at = f"{where}.nodeGroups[{i}]"
        if isinstance(entry, Mapping) and "nodeGroup" in entry:
            bindings = _referenced(entry, at, scenario_groups)
        else:
            bindings = [_in_place(entry, at)]
        for b in bindings:
            if any(o.group.name == b.group.name for o in out):
                raise ManifestError(f'{at}: name: Duplicate value: "{b.group.name}"')
            out.append(b)
    return ClusterAutoscalerSpec(options, tuple(out), delay)


def _referenced(
    raw: Mapping[str, Any], where: str, scenario_groups: Mapping[str, ScenarioGroup]
) -> list[GroupBinding]:
    """Node groups made of a scenario node group: one per zone unless ``multiZone``."""
    a = _mapping(raw, where, _REF_KEYS)
    name = a["nodeGroup"]
    source = scenario_groups.get(name) if isinstance(name, str) else None
    if source is None:
        known = ", ".join(sorted(scenario_groups)) or "none"
        raise ManifestError(
            f"{where}: nodeGroup: Not found: {name!r}: no such entry in nodeGroups ({known})"
        )
    multi = a.get("multiZone", False)
    if not isinstance(multi, bool):
        raise ManifestError(f"{where}: multiZone: Invalid value: {multi!r}: expected true or false")
    if "maxSize" not in a:
        raise ManifestError(f"{where}: maxSize: Required value: a node group needs a max size")
    template = source.template
    parts: list[tuple[str, tuple[str, ...], int]]
    if not source.zones:
        parts = [(source.name, (), source.count)]
    elif multi:
        parts = [(source.name, source.zones, sum(source.per_zone.get(z, 0) for z in source.zones))]
    else:
        parts = [(f"{source.name}-{z}", (z,), source.per_zone.get(z, 0)) for z in source.zones]
    out = []
    for group_name, zones, size in parts:
        labels = dict(template.metadata.labels)
        if len(zones) == 1:
            labels[source.zone_key] = zones[0]
            if source.zone_key == LABEL_TOPOLOGY_ZONE:
                labels.setdefault(LABEL_TOPOLOGY_REGION, region_of(zones[0]))
        group = parse_node_group(
            {
                "name": group_name,
                "minSize": a.get("minSize", 0),
                "maxSize": a["maxSize"],
                "size": size,
            },
            where,
        )
        status = template.status
        group = replace(
            group,
            labels=labels,
            taints=list(template.spec.taints),
            capacity={k: str(v) for k, v in status.capacity.items()},
            allocatable={k: str(v) for k, v in status.allocatable.items()},
            zones=list(zones) if source.zone_key == LABEL_TOPOLOGY_ZONE else [],
        )
        out.append(GroupBinding(group, source.name, zones, source.zone_key))
    return out


def _in_place(raw: object, where: str) -> GroupBinding:
    """A node group declared in the section: its template gets the defaults a scenario node
    group's gets (os, arch, instance type, capacity)."""
    group = parse_node_group(raw, where)
    node = with_node_defaults(
        Node(
            metadata=ObjectMeta(name="template", labels=dict(group.labels)),
            status=NodeStatus(
                capacity=dict(group.capacity), allocatable=dict(group.allocatable or {})
            ),
        )
    )
    labels = dict(node.metadata.labels)
    if len(group.zones) == 1:
        labels.setdefault(LABEL_TOPOLOGY_REGION, region_of(group.zones[0]))
    group = replace(
        group,
        labels=labels,
        capacity={k: str(v) for k, v in node.status.capacity.items()},
        allocatable={k: str(v) for k, v in node.status.allocatable.items()},
    )
    return GroupBinding(group, "", tuple(group.zones))


def _parse_karpenter(raw: object, where: str, delay: float, base: Path) -> KarpenterSpec:
    a = _mapping(raw, where, _KARPENTER_KEYS)
    raw_pools = a.get("nodePools")
    if not isinstance(raw_pools, list):
        raise ManifestError(f"{where}: nodePools: Required value: a list of NodePools")
    pools = parse_nodepools(raw_pools, f"{where}.nodePools")
    catalogue = None
    if "catalogue" in a:
        path = a["catalogue"]
        if not isinstance(path, str) or not path:
            raise ManifestError(f"{where}: catalogue: expected a file name")
        catalogue = tuple(load_catalogue(base / path))
    idle = _seconds(a, "batchIdleDuration", BATCH_IDLE_DURATION, where)
    most = _seconds(a, "batchMaxDuration", BATCH_MAX_DURATION, where)
    return KarpenterSpec(tuple(pools), catalogue, idle, most, delay)


def nanos(seconds: float) -> int:
    return round(seconds * NANOS)


__all__ = [
    "AutoscalerSpec",
    "ClusterAutoscalerSpec",
    "GroupBinding",
    "KarpenterSpec",
    "nanos",
    "parse_autoscaler",
]
