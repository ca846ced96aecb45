"""Node groups (a cloud's instance groups) and the template nodes cluster-autoscaler builds.

A node group has a name (upstream's ``Id()``), min and max size, a target size (what the cloud
was asked for) and a template: the labels, taints and capacity of the nodes it would add. A group
is either in one zone or spans several (as multi-zone ASGs and VMSS do); the template of a
multi-zone group carries its first zone, like the cloud providers' templates built from the
group's first availability zone. A node belongs to the group whose name its
``topospread.io/node-group`` label carries (the stand-in for a provider id; the label is ignored
when comparing groups, as providers' own group labels are).
"""

from __future__ import annotations

import dataclasses
import math
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import msgspec

from topospread.api.decode import decode_object
from topospread.api.defaults import default_node
from topospread.api.resource import parse_quantity
from topospread.api.types import (
    LABEL_FAILURE_DOMAIN_BETA_REGION,
    LABEL_FAILURE_DOMAIN_BETA_ZONE,
    LABEL_HOSTNAME,
    LABEL_INSTANCE_TYPE_STABLE,
    LABEL_TOPOLOGY_REGION,
    LABEL_TOPOLOGY_ZONE,
    DaemonSet,
    Node,
    NodeSpec,
    NodeStatus,
    ObjectMeta,
    OwnerReference,
    Pod,
    Taint,
)
from topospread.api.validation import validate_node
from topospread.autoscaler.clusterautoscaler.taints import (
    DEFAULT_TAINT_CONFIG,
    TaintConfig,
    sanitize_taints,
)
from topospread.errors import ManifestError, ValidationError
from topospread.framework.types import NodeInfo
from topospread.nodeaffinity import get_required_node_affinity
from topospread.taints import do_not_schedule_taints_filter, find_matching_untolerated_taint

NODE_GROUP_LABEL = "topospread.io/node-group"
GIB = 1024**3


def with_node_name(pod: Pod, node_name: str) -> Pod:
    """The pod as bound to ``node_name``."""
    return msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, node_name=node_name))


@dataclass(slots=True)
class NodeGroup:
    """One node group; ``target_size`` changes as the autoscaler resizes it.

    Upstream: cloudprovider.NodeGroup (MinSize, MaxSize, TargetSize, Id, TemplateNodeInfo)
    """

    name: str
    min_size: int
    max_size: int
    target_size: int
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: Sequence[Taint] = ()
    capacity: Mapping[str, str] = field(default_factory=dict)
    allocatable: Mapping[str, str] | None = None
    zones: Sequence[str] = ()

    def id(self) -> str:
        return self.name

    @property
    def zone(self) -> str:
        return self.zones[0] if self.zones else ""

    def template_node(self, name: str, taint_config: TaintConfig = DEFAULT_TAINT_CONFIG) -> Node:
        """A node as the group would create it, named ``name``, without the transient
        taints: the node-condition and autoscaler taints and ``taint_config``'s startup and
        status taints.

        Upstream: the providers' TemplateNodeInfo (buildNodeFromTemplate and its generic
        labels: hostname, zone), SanitizeNode (the taints) and DeepCopyTemplateNode (the
        hostname label follows the name).
        """
        labels = {**self.labels, NODE_GROUP_LABEL: self.name, LABEL_HOSTNAME: name}
        if self.zone:
            labels.setdefault(LABEL_TOPOLOGY_ZONE, self.zone)
        capacity: dict[str, str | int | float] = dict(self.capacity)
        source = self.allocatable if self.allocatable is not None else self.capacity
        allocatable: dict[str, str | int | float] = dict(source)
        return Node(
            metadata=ObjectMeta(name=name, labels=labels),
            spec=NodeSpec(taints=sanitize_taints(self.taints, taint_config)),
            status=NodeStatus(capacity=capacity, allocatable=allocatable),
        )

    def new_node_name(self, index: int) -> str:
        """The name of the group's ``index``-th created node (what a cloud would call it)."""
        return f"{self.name}-{index}"


def node_cores_and_memory(node: Node) -> tuple[int, int]:
    """Cores (rounded up) and memory bytes of a node's capacity. Upstream: GetNodeCoresAndMemory"""
    cap = node.status.capacity
    cores = parse_quantity(cap.get("cpu", 0)).milli_value()
    memory = parse_quantity(cap.get("memory", 0)).value()
    return math.ceil(cores / 1000), memory


def node_group_of(node: Node) -> str:
    """The group a node belongs to ("" when it is not autoscaled)."""
    return node.metadata.labels.get(NODE_GROUP_LABEL, "")


def template_node_name(group: NodeGroup) -> str:
    """A sanitized template node name: ``template-node-for-<group>-<n>``, where upstream uses a
    random number and this a checksum of the name, so runs are deterministic.

    Upstream: SanitizedTemplateNodeInfoFromNodeGroup (simulator/node_info_utils.go)
    """
    return f"template-node-for-{group.name}-{zlib.crc32(group.name.encode())}"


def daemonset_runs_on(ds: DaemonSet, node: Node) -> bool:
    """Whether the DaemonSet's pod would be placed on the node: its node selector and required
    node affinity match, and it tolerates the node's NoSchedule and NoExecute taints.

    Upstream: daemonset.GetDaemonSetPodsForNode (utils/daemonset) runs the scheduler's
    predicates for a DaemonSet pod; these are the ones a DaemonSet pod can fail on a new node.
    """
    pod = Pod(metadata=ds.spec.template.metadata, spec=ds.spec.template.spec)
    if not get_required_node_affinity(pod).match(node):
        return False
    taint = find_matching_untolerated_taint(
        node.spec.taints, pod.spec.tolerations, do_not_schedule_taints_filter
    )
    return taint is None


def daemonset_pod(ds: DaemonSet, node_name: str) -> Pod:
    """The DaemonSet's pod on ``node_name`` (named ``<ds>-<node>``, owned by the DaemonSet)."""
    template = ds.spec.template
    meta = ObjectMeta(
        name=f"{ds.metadata.name}-{node_name}",
        namespace=ds.metadata.namespace or "default",
        labels=dict(template.metadata.labels),
        annotations=dict(template.metadata.annotations),
        owner_references=[
            OwnerReference(
                api_version="apps/v1",
                kind="DaemonSet",
                name=ds.metadata.name,
                uid=ds.metadata.uid,
                controller=True,
            )
        ],
    )
    spec = msgspec.structs.replace(template.spec, node_name=node_name)
    return Pod(metadata=meta, spec=spec)


# Set on every template node (real-node ones too: nodeinfos.py).
TEMPLATE_NODE_LABEL = "cluster-autoscaler.kubernetes.io/template-node"
# The deprecated labels a cloud template gets from the stable ones. Upstream:
# UpdateDeprecatedLabels (utils/labels/labels.go)
_DEPRECATED_LABELS = (
    (LABEL_INSTANCE_TYPE_STABLE, "beta.kubernetes.io/instance-type"),
    (LABEL_TOPOLOGY_REGION, LABEL_FAILURE_DOMAIN_BETA_REGION),
    (LABEL_TOPOLOGY_ZONE, LABEL_FAILURE_DOMAIN_BETA_ZONE),
)


def template_node_info(
    group: NodeGroup,
    daemonsets: Iterable[DaemonSet] = (),
    name: str | None = None,
    taint_config: TaintConfig = DEFAULT_TAINT_CONFIG,
) -> NodeInfo:
    """The group's template NodeInfo as the cloud provider gives it: the template node (its
    taints sanitized by ``taint_config``), marked a template, its deprecated labels set from
    the stable ones, with the pods of every DaemonSet that would run on it (--force-ds or not).

    Upstream: SanitizedTemplateNodeInfoFromNodeGroup (simulator/node_info_utils.go,
    kubernetes-sigs/cluster-autoscaler 33c3f97)
    """
    node = group.template_node(name or template_node_name(group), taint_config)
    labels = dict(node.metadata.labels)
    for stable, beta in _DEPRECATED_LABELS:
        if stable in labels:
            labels[beta] = labels[stable]
    labels[TEMPLATE_NODE_LABEL] = "true"
    node = msgspec.structs.replace(
        node, metadata=msgspec.structs.replace(node.metadata, labels=labels)
    )
    info = NodeInfo(node)
    for ds in daemonsets:
        if daemonset_runs_on(ds, node):
            info.add_pod(daemonset_pod(ds, node.metadata.name))
    return info


def copy_template_node(template: NodeInfo, name: str) -> tuple[Node, list[Pod]]:
    """The template's node renamed (hostname label included) and its pods moved to it.

    Upstream: DeepCopyTemplateNode (utils/scheduler/scheduler.go)
    """
    node = template.node
    labels = {**node.metadata.labels, LABEL_HOSTNAME: name}
    meta = msgspec.structs.replace(node.metadata, name=name, labels=labels)
    new_node = msgspec.structs.replace(node, metadata=meta)
    pods = []
    for pod in template.pods:
        owner = pod.metadata.owner_references[0].name if pod.metadata.owner_references else "pod"
        pod_meta = msgspec.structs.replace(pod.metadata, name=f"{owner}-{name}")
        pods.append(with_node_name(msgspec.structs.replace(pod, metadata=pod_meta), name))
    return new_node, pods


_GROUP_KEYS = ("name", "minSize", "maxSize", "size", "zones", "template")


def _size(raw: Mapping[str, object], key: str, default: int, where: str) -> int:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ManifestError(
            f"{where}: {key}: Invalid value: {value!r}: expected a count (0 or more)"
        )
    return value


def parse_node_group(raw: object, where: str) -> NodeGroup:
    """A node group from a mapping: ``name``, ``minSize`` (0), ``maxSize``, ``size``
    (``minSize``), ``zones`` (a list; the first is the template's), and ``template``, a Node
    manifest whose labels, taints, capacity and allocatable the group's nodes get. Errors
    name ``where`` and the field (a ManifestError: the CLI exits with code 2)."""
    if not isinstance(raw, Mapping):
        raise ManifestError(f"{where}: expected a mapping with name, minSize, maxSize, template")
    unknown = sorted(str(k) for k in raw if k not in _GROUP_KEYS)
    if unknown:
        known = ", ".join(_GROUP_KEYS)
        raise ManifestError(f"{where}: {unknown[0]}: unknown field; a node group has {known}")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise ManifestError(f"{where}: name: Required value: a node group needs a name")
    if "maxSize" not in raw:
        raise ManifestError(f"{where}: maxSize: Required value: a node group needs a max size")
    min_size = _size(raw, "minSize", 0, where)
    max_size = _size(raw, "maxSize", 0, where)
    size = _size(raw, "size", min_size, where)
    if min_size > max_size:
        raise ManifestError(
            f"{where}: minSize: Invalid value: {min_size}: must not exceed maxSize ({max_size})"
        )
    if not min_size <= size <= max_size:
        raise ManifestError(
            f"{where}: size: Invalid value: {size}: must lie between minSize ({min_size}) "
            f"and maxSize ({max_size})"
        )
    zones = raw.get("zones", [])
    if not isinstance(zones, list) or not all(isinstance(z, str) and z for z in zones):
        raise ManifestError(f"{where}: zones: expected a list of zone names")
    raw_template = raw.get("template")
    if raw_template is None:
        raw_template = {}
    elif not isinstance(raw_template, Mapping):
        raise ManifestError(f"{where}: template: expected a Node manifest (a mapping)")
    template = decode_object(raw_template, Node, f"{where}: template")
    status = template.status
    group = NodeGroup(
        name,
        min_size,
        max_size,
        size,
        labels=dict(template.metadata.labels),
        taints=list(template.spec.taints),
        capacity={k: str(v) for k, v in status.capacity.items()},
        allocatable={k: str(v) for k, v in status.allocatable.items()} or None,
        zones=list(zones),
    )
    _check_group_nodes(group, where)
    return group


def _check_group_nodes(group: NodeGroup, where: str) -> None:
    """The nodes the group would create (one per zone) validated as the API server validates
    a Node, each error named where the group declares it: its name, a zone, or its template.
    A ValidationError (exit code 2), here rather than when a node is first created."""
    for zone in group.zones or [""]:
        one = dataclasses.replace(group, zones=[zone] if zone else [])
        name = one.new_node_name(1)
        errors = validate_node(default_node(one.template_node(name)))
        if not errors:
            continue
        err = errors[0]
        if err.field == "metadata.name":
            raise ValidationError(f"{where}: name: {err.body()} (its nodes' names: {name}, ...)")
        if zone and err.field.startswith("metadata.labels") and zone in str(err):
            raise ValidationError(f"{where}: zones: {err.body()} (a node label's value)")
        raise ValidationError(f"{where}: template: {err}")


def parse_node_groups(raw: object, where: str) -> list[NodeGroup]:
    """A list of node groups; names must be unique."""
    if not isinstance(raw, list):
        raise ManifestError(f"{where}: expected a list of node groups")
    groups: list[NodeGroup] = []
    for i, item in enumerate(raw):
        group = parse_node_group(item, f"{where}[{i}]")
        if any(g.name == group.name for g in groups):
            raise ManifestError(f'{where}[{i}]: name: Duplicate value: "{group.name}"')
        groups.append(group)
    return groups
