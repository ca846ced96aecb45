"""The DaemonSet pods Karpenter expects on a node, and the resources it keeps for them.

A new nodeclaim keeps room, per instance type, for the DaemonSet pods that would run on a node
of that type from its NodePool: those tolerating the NodePool's taints (PreferNoSchedule
tolerated, as a daemon does not heed a preference) whose node selector and one of whose
required node-affinity terms the NodePool's requirements and the type's labels allow. An
existing node (or in-flight nodeclaim) keeps room for the compatible DaemonSet pods not yet
running on it.
"""

from __future__ import annotations

from collections.abc import Sequence

from topospread.api.types import DaemonSet, Node, Pod
from topospread.autoscaler.karpenter.instancetypes import InstanceType
from topospread.autoscaler.karpenter.nodeclaim import Resources, requests_of, tolerates
from topospread.autoscaler.karpenter.nodepool import NodePool
from topospread.autoscaler.karpenter.preferences import (
    remove_required_node_affinity_term,
    tolerate_prefer_no_schedule_taints,
)
from topospread.autoscaler.karpenter.requirements import from_labels, strict_pod_requirements


def daemon_pods(daemonsets: Sequence[DaemonSet]) -> list[Pod]:
    return [
        Pod(metadata=ds.spec.template.metadata, spec=ds.spec.template.spec) for ds in daemonsets
    ]


def compatible_with_nodepool(pool: NodePool, it: InstanceType, pod: Pod) -> bool:
    """Whether the daemon pod would run on a node of type ``it`` from ``pool``.
    Upstream: isDaemonPodCompatible (scheduler.go)"""
    pod = tolerate_prefer_no_schedule_taints(pod) or pod
    if tolerates(pod, pool.taints):
        return False
    base = pool.node_requirements()
    type_reqs = it.requirements()
    current: Pod | None = pod
    while current is not None:
        reqs = strict_pod_requirements(current)
        if not base.compatible(reqs) and type_reqs.intersects(reqs):
            return True
        current = remove_required_node_affinity_term(current)
    return False


def nodeclaim_overhead(
    pool: NodePool, catalogue: Sequence[InstanceType], daemons: Sequence[Pod]
) -> dict[str, Resources]:
    """Per instance type, the requests of the daemon pods a node of that type from ``pool``
    runs. Upstream: buildDaemonOverheadGroups (scheduler.go)"""
    out = {}
    for it in catalogue:
        total = Resources()
        for pod in daemons:
            if compatible_with_nodepool(pool, it, pod):
                total = total + requests_of(pod)
        out[it.name] = total
    return out


def _is_daemon_pod(pod: Pod) -> bool:
    return any(
        r.api_version == "apps/v1" and r.kind == "DaemonSet" for r in pod.metadata.owner_references
    )


def existing_node_reserve(node: Node, pods: Sequence[Pod], daemons: Sequence[Pod]) -> Resources:
    """What an existing node keeps for the compatible daemon pods not running on it yet: their
    requests less those of the DaemonSet pods it runs, never below zero.
    Upstream: getCompatibleDaemonPods and NewExistingNode (existingnode.go)"""
    labels = from_labels(node.metadata.labels)
    wanted = Resources()
    for pod in daemons:
        if tolerates(pod, node.spec.taints):
            continue
        if labels.compatible(strict_pod_requirements(pod), allow_undefined_well_known=False):
            continue
        wanted = wanted + requests_of(pod)
    running = Resources()
    for pod in pods:
        if _is_daemon_pod(pod):
            running = running + requests_of(pod)
    left = wanted - running
    return Resources(max(0, left.cpu_milli), max(0, left.memory), max(0, left.pods))


__all__ = [
    "compatible_with_nodepool",
    "daemon_pods",
    "existing_node_reserve",
    "nodeclaim_overhead",
]
