"""Cluster and node-group health: which registered nodes are ready, still starting or broken,
how many nodes each group still has coming, and whether too many are unready to autoscale.

cluster-autoscaler sorts each registered node, every loop, into Ready, NotStarted or Unready.
A node that is not ready (its Ready condition False or Unknown, DiskPressure or
NetworkUnavailable True, or one of the not-ready, disk-pressure and network-unavailable
taints on it) is NotStarted while it is younger than ``max-node-startup-time`` (15m by
default, counted from its creationTimestamp) — a node that breaks down within that window
is still "starting" — and Unready only after that. NotStarted nodes are upcoming nodes: the
group's upcoming count is its target size less its Ready and Unready nodes, and the loop
replaces each NotStarted node by a copy of the group's template in its snapshot. Only
Unready nodes count against the health gates: when more nodes are unready than both
``ok-total-unready-count`` and ``max-total-unready-percentage`` of the cluster allow, the
cluster is unhealthy and the loop does nothing (no scale-up, no scale-down, the unneeded
nodes forgotten). A node group whose ready nodes fall short of what its target size expects
(less the nodes a scale-up in progress still owes) by more than those limits is unhealthy:
it is not scaled up ("not ready for scale-up").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from topospread.api.types import CONDITION_TRUE, NODE_READY, Node
from topospread.autoscaler.clusterautoscaler.nodegroup import node_group_of
from topospread.autoscaler.clusterautoscaler.options import AutoscalingOptions
from topospread.autoscaler.clusterautoscaler.taints import DEFAULT_TAINT_CONFIG, TaintConfig

# Upstream: the conditions and taints GetNodeReadiness reads (utils/kubernetes/ready.go).
NODE_DISK_PRESSURE: Final = "DiskPressure"
NODE_NETWORK_UNAVAILABLE: Final = "NetworkUnavailable"
NOT_READY_TAINT_KEYS: Final = frozenset(
    {
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/disk-pressure",
        "node.kubernetes.io/network-unavailable",
    }
)


def is_node_ready(node: Node, taint_config: TaintConfig = DEFAULT_TAINT_CONFIG) -> bool:
    """Whether the node can run pods: its Ready condition is True (a node with no Ready
    condition counts as ready: the model's nodes usually carry none), neither DiskPressure nor
    NetworkUnavailable is True, and it has none of the not-ready, disk-pressure and
    network-unavailable taints, nor one of ``taint_config``'s startup taints
    (cluster-autoscaler lists such a node as not ready, since its creation).
    Upstream: kube_util.GetNodeReadiness (utils/kubernetes/ready.go) and
    FilterOutNodesWithStartupTaints (utils/taints/taints.go)
    """
    for c in node.status.conditions:
        if c.type == NODE_READY and c.status != CONDITION_TRUE:
            return False
        if c.type in (NODE_DISK_PRESSURE, NODE_NETWORK_UNAVAILABLE) and c.status == CONDITION_TRUE:
            return False
    return not any(
        t.key in NOT_READY_TAINT_KEYS or taint_config.is_startup_taint(t.key)
        for t in node.spec.taints
    )


@dataclass(slots=True)
class Readiness:
    """The registered nodes by state, by name. Upstream: clusterstate.Readiness"""

    ready: list[str] = field(default_factory=list)
    unready: list[str] = field(default_factory=list)
    not_started: list[str] = field(default_factory=list)
    registered: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ClusterReadiness:
    """The whole cluster's readiness and each node group's."""

    total: Readiness = field(default_factory=Readiness)
    per_group: dict[str, Readiness] = field(default_factory=dict)
    node_count: int = 0

    def not_started(self) -> list[str]:
        """The autoscaled nodes still starting up (upstream's registered upcoming nodes)."""
        return [n for g in sorted(self.per_group) for n in self.per_group[g].not_started]


def readiness_of(
    nodes: Iterable[Node],
    now: float,
    created: Mapping[str, float],
    options: AutoscalingOptions,
) -> ClusterReadiness:
    """Each node is Ready, NotStarted (not ready and created less than
    ``max-node-startup-time`` before ``now``) or Unready. ``created`` holds each node's
    creationTimestamp as seconds on the caller's clock; a node not in it has the zero time
    (it is old).

    Upstream: ClusterStateRegistry.updateReadinessStats (clusterstate.go)
    """
    out = ClusterReadiness()
    startup = options.max_node_startup_time
    taints = options.taint_config
    for node in nodes:
        name = node.metadata.name
        out.node_count += 1
        group = node_group_of(node)
        counts = [out.total] + ([out.per_group.setdefault(group, Readiness())] if group else [])
        if is_node_ready(node, taints):
            state = "ready"
        elif name in created and created[name] + startup > now:
            state = "not_started"
        else:
            state = "unready"
        for r in counts:
            r.registered.append(name)
            getattr(r, state).append(name)
    return out


def upcoming_nodes(readiness: ClusterReadiness, targets: Mapping[str, int]) -> dict[str, int]:
    """How many nodes each group still has coming: its target size less its Ready and Unready
    nodes (so NotStarted nodes and the instances not registered yet); groups with none left
    out. Upstream: ClusterStateRegistry.GetUpcomingNodes (its registered upcoming nodes are
    ``ClusterReadiness.not_started``)
    """
    out = {}
    for name, target in targets.items():
        r = readiness.per_group.get(name, Readiness())
        coming = target - (len(r.ready) + len(r.unready))
        if coming > 0:
            out[name] = coming
    return out


def _too_many(unready: int, of: int, options: AutoscalingOptions) -> bool:
    return (
        unready > options.ok_total_unready_count
        and unready > options.max_total_unready_percentage / 100.0 * of
    )


def is_cluster_healthy(readiness: ClusterReadiness, options: AutoscalingOptions) -> bool:
    """Upstream: ClusterStateRegistry.IsClusterHealthy"""
    return not _too_many(len(readiness.total.unready), readiness.node_count, options)


def unhealthy_groups(
    readiness: ClusterReadiness,
    targets: Mapping[str, int],
    increases: Mapping[str, int],
    options: AutoscalingOptions,
) -> set[str]:
    """The node groups whose ready nodes fall too far short of their acceptable minimum (the
    target size less a scale-up in progress's increase).

    Upstream: ClusterStateRegistry.IsNodeGroupHealthy and updateAcceptableRanges
    """
    out = set()
    for name, target in targets.items():
        r = readiness.per_group.get(name)
        min_nodes = target - increases.get(name, 0)
        if r is None:
            # No registered node: fine at target 0 or while scaling up from nothing.
            if target != 0 and min_nodes > 0:
                out.add(name)
            continue
        unjustified = max(0, min_nodes - len(r.ready))
        if _too_many(unjustified, len(r.ready) + len(r.unready) + len(r.not_started), options):
            out.add(name)
    return out


__all__ = [
    "NOT_READY_TAINT_KEYS",
    "ClusterReadiness",
    "Readiness",
    "is_cluster_healthy",
    "is_node_ready",
    "readiness_of",
    "unhealthy_groups",
    "upcoming_nodes",
]
