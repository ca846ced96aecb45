"""Cluster and node-group health: how many nodes are unready, and whether that is too many to
autoscale.

cluster-autoscaler counts each registered node as Ready, NotStarted (still starting up) or
Unready (broke down after it started). When more nodes are unready than both
``ok-total-unready-count`` and ``max-total-unready-percentage`` of the cluster allow, the
cluster is unhealthy and the loop does nothing (no scale-up, no scale-down, the unneeded nodes
forgotten). A node group whose ready nodes fall short of what its target size expects (less
the nodes a scale-up in progress still owes) by more than those limits is unhealthy: it is not
scaled up ("not ready for scale-up").
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from topospread.api.types import Node
from topospread.autoscaler.clusterautoscaler.nodegroup import node_group_of
from topospread.autoscaler.clusterautoscaler.options import AutoscalingOptions
from topospread.autoscaler.clusterautoscaler.scaledown import is_node_ready


@dataclass(slots=True)
class Readiness:
    """Counts of registered nodes by state. Upstream: clusterstate.Readiness"""

    ready: int = 0
    unready: int = 0
    not_started: int = 0


@dataclass(slots=True)
class ClusterReadiness:
    """The whole cluster's readiness and each node group's."""

    total: Readiness = field(default_factory=Readiness)
    per_group: dict[str, Readiness] = field(default_factory=dict)
    node_count: int = 0


def readiness_of(nodes: Iterable[Node], not_started: Collection[str]) -> ClusterReadiness:
    """Each node is NotStarted while it starts up (``not_started``), else Ready or Unready by
    its Ready condition. Upstream: updateReadinessStats (clusterstate.go)"""
    out = ClusterReadiness()
    for node in nodes:
        out.node_count += 1
        group = node_group_of(node)
        counts = [out.total] + ([out.per_group.setdefault(group, Readiness())] if group else [])
        for r in counts:
            if node.metadata.name in not_started:
                r.not_started += 1
            elif is_node_ready(node):
                r.ready += 1
            else:
                r.unready += 1
    return out


def _too_many(unready: int, of: int, options: AutoscalingOptions) -> bool:
    return (
        unready > options.ok_total_unready_count
        and unready > options.max_total_unready_percentage / 100.0 * of
    )


def is_cluster_healthy(readiness: ClusterReadiness, options: AutoscalingOptions) -> bool:
    """Upstream: ClusterStateRegistry.IsClusterHealthy"""
    return not _too_many(readiness.total.unready, readiness.node_count, options)


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
        unjustified = max(0, min_nodes - r.ready)
        if _too_many(unjustified, r.ready + r.unready + r.not_started, options):
            out.add(name)
    return out


__all__ = [
    "ClusterReadiness",
    "Readiness",
    "is_cluster_healthy",
    "readiness_of",
    "unhealthy_groups",
]
