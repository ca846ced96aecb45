"""Node groups: nodes stamped from one template, per zone or by count, as a timeline
scenario's ``nodeGroups`` declare them and ``addNodes`` adds more of; the template gets what a
real node has (os, arch, instance type, ephemeral storage, pods) unless it says otherwise."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from topospread.api.loader import decode_object
from topospread.api.types import (
    LABEL_ARCH_STABLE,
    LABEL_INSTANCE_TYPE_STABLE,
    LABEL_OS_STABLE,
    LABEL_TOPOLOGY_ZONE,
    Node,
)
from topospread.errors import ManifestError
from topospread.simulator.timeline_steps.arguments import count_arg

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


@dataclass(frozen=True, slots=True)
class NodeGroup:
    """Nodes stamped from one template: ``<name>-<zone>-<i>`` per zone, or ``<name>-<i>``."""

    name: str
    template: Node
    zones: tuple[str, ...]
    per_zone: Mapping[str, int]
    count: int
    zone_key: str = LABEL_TOPOLOGY_ZONE


def parse_group(raw: Any, where: str) -> NodeGroup:
    """One entry of ``nodeGroups``; errors name ``where`` and the field."""
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
    # Only a null is an absent template or zones: an empty list or string was read as none.
    raw_template = raw.get("template")
    template = with_node_defaults(
        decode_object({} if raw_template is None else raw_template, Node, f"{where}: template")
    )
    zones = raw.get("zones")
    zones = [] if zones is None else zones
    if not isinstance(zones, list) or not all(isinstance(z, str) and z for z in zones):
        raise ManifestError(f"{where}: zones: expected a list of zone names")
    per_zone_raw = raw.get("perZone", 0 if "count" in raw else 1)
    per_zone: dict[str, int]
    if isinstance(per_zone_raw, Mapping):
        per_zone = {}
        for zone, n in per_zone_raw.items():
            if zone not in zones:
                raise ManifestError(f"{where}: perZone.{zone}: zone not listed in zones")
            per_zone[str(zone)] = count_arg(n, f"{where}: perZone.{zone}")
    else:
        n = count_arg(per_zone_raw, f"{where}: perZone")
        per_zone = {zone: n for zone in zones}
    count = count_arg(raw.get("count", 0), f"{where}: count")
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


__all__ = [
    "DEFAULT_CAPACITY",
    "DEFAULT_NODE_LABELS",
    "DEFAULT_REGION",
    "NodeGroup",
    "parse_group",
    "region_of",
    "with_node_defaults",
]
