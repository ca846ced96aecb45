"""How many template nodes a node group needs for a set of pending pods.

Pods are first grouped by equivalence (same controller, same spec and labels), then packed
First-Fit Decreasing onto template nodes added to a fork of the snapshot, each placement
checked by the scheduler's own PreFilter and Filter plugins (so a zonal spread constraint can
stop the packing, as it does upstream). A limiter caps the number of nodes added: the static
``max-nodes-per-scaleup``, the free capacity of the group and its similar groups, and what
``max-nodes-total`` leaves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import msgspec

from topospread.api.resource import parse_quantity
from topospread.api.types import LABEL_HOSTNAME, Pod
from topospread.autoscaler.clusterautoscaler.drainability import is_daemonset_pod
from topospread.autoscaler.clusterautoscaler.nodegroup import (
    NodeGroup,
    copy_template_node,
    with_node_name,
)
from topospread.autoscaler.clusterautoscaler.snapshot import PredicateChecker, PredicateError
from topospread.framework.types import NodeInfo
from topospread.plugins.noderesources.resource_helpers import pod_requests
from topospread.plugins.podtopologyspread.common import ERR_REASON_CONSTRAINTS_NOT_MATCH

# Upstream: maxEquivalenceGroupsByController (core/scaleup/equivalence/groups.go).
MAX_EQUIVALENCE_GROUPS_BY_CONTROLLER = 10


@dataclass(slots=True)
class PodGroup:
    """Equivalent pending pods and what scale-up learned about them.

    Upstream: equivalence.PodGroup (core/scaleup/equivalence/groups.go)
    """

    pods: list[Pod]
    scheduling_errors: dict[str, PredicateError] = field(default_factory=dict)
    schedulable_groups: list[str] = field(default_factory=list)
    schedulable: bool = False

    def exemplar(self) -> Pod:
        return self.pods[0]


def controller_key(pod: Pod) -> tuple[str, str, str] | None:
    for ref in pod.metadata.owner_references:
        if ref.controller:
            return (ref.kind, ref.name, ref.uid)
    return None


def spec_key(pod: Pod) -> bytes:
    """What must be equal for two pods of one controller to be equivalent: the spec without
    its hostname and projected volumes (each pod's service-account token volume has a name
    of its own), the labels and the namespace. (Container env and volume mounts, which
    upstream drops too, are not decoded here.)

    Upstream: groupPodsBySchedulingProperties's labels check and PodSpecSemanticallyEqual
    (sanitizePodSpec: dropProjectedVolumesAndMounts, dropHostname, dropEnv; utils/utils.go)
    """
    volumes = [v for v in pod.spec.volumes if v.projected is None]
    spec = msgspec.structs.replace(pod.spec, hostname="", volumes=volumes)
    labels = sorted(pod.metadata.labels.items())
    return msgspec.json.encode([pod.metadata.namespace, labels, spec])


def build_pod_groups(pods: Sequence[Pod]) -> list[PodGroup]:
    """Equivalence groups in the order their first pod appears (upstream's order is a Go
    map's); a pod without a controller, or of a DaemonSet, is a group of its own, and a
    controller has at most 10 groups (the rest are single pods).

    Upstream: equivalence.BuildPodGroups
    """
    groups: list[PodGroup] = []
    by_controller: dict[tuple[str, str, str], dict[bytes, PodGroup]] = {}
    for pod in pods:
        controller = controller_key(pod)
        if controller is None or is_daemonset_pod(pod):
            groups.append(PodGroup([pod]))
            continue
        known = by_controller.setdefault(controller, {})
        key = spec_key(pod)
        group = known.get(key)
        if group is not None:
            group.pods.append(pod)
        elif len(known) < MAX_EQUIVALENCE_GROUPS_BY_CONTROLLER:
            group = known[key] = PodGroup([pod])
            groups.append(group)
        else:
            groups.append(PodGroup([pod]))
    return groups


def _pod_request(pod: Pod, resource: str) -> int:
    """The pod's request of ``resource`` (cpu in millicores), init containers, pod-level
    requests and overhead included. Upstream: podutils.PodRequests (utils/pod/pod.go)"""
    q = pod_requests(pod).get(resource)
    if q is None:
        return 0
    return q.milli_value() if resource == "cpu" else q.value()


def decreasing_pod_order(groups: Sequence[list[Pod]], template: NodeInfo) -> list[list[Pod]]:
    """Groups by decreasing size relative to the template: cpu/allocatable + memory/allocatable
    of the exemplar's requests (stable for equal scores).

    Upstream: DecreasingPodOrderer.Order (estimator/decreasing_pod_orderer.go)
    """
    alloc = template.node.status.allocatable
    cpu = parse_quantity(alloc["cpu"]).milli_value() if "cpu" in alloc else 0
    mem = parse_quantity(alloc["memory"]).value() if "memory" in alloc else 0

    def score(pods: list[Pod]) -> float:
        if not pods:
            return 0.0
        s = 0.0
        if cpu > 0:
            s += _pod_request(pods[0], "cpu") / cpu
        if mem > 0:
            s += _pod_request(pods[0], "memory") / mem
        return s

    return sorted(groups, key=score, reverse=True)


class EstimationLimiter:
    """Caps the nodes one estimation may add: ``max_nodes`` > 0 is a cap, 0 is none, and a
    negative value allows no node at all.

    Upstream: thresholdBasedEstimationLimiter (estimator/threshold_based_limiter.go); the time
    threshold (max-nodegroup-binpacking-duration) is not modelled: the model has no clock here.
    """

    def __init__(self, max_nodes: int = 0) -> None:
        self.max_nodes = max_nodes
        self.nodes = 0

    def start_estimation(self) -> None:
        self.nodes = 0

    def permission_to_add_node(self) -> bool:
        if self.max_nodes < 0 or (self.max_nodes > 0 and self.nodes >= self.max_nodes):
            return False
        self.nodes += 1
        return True


def node_limit(
    *,
    max_nodes_per_scaleup: int,
    group: NodeGroup | None,
    similar_groups: Sequence[NodeGroup] = (),
    max_nodes_total: int = 0,
    current_node_count: int = 0,
) -> int:
    """The limiter's cap from its three thresholds (0: no limit, -1: no capacity).

    Upstream: NewStaticThreshold, NewSngCapacityThreshold, NewClusterCapacityThreshold
    """
    limits: list[int] = []
    if max_nodes_per_scaleup > 0:
        limits.append(max_nodes_per_scaleup)
    if group is not None:
        free = sum(max(0, g.max_size - g.target_size) for g in (group, *similar_groups))
        limits.append(free if free > 0 else -1)
    if max_nodes_total > 0:
        left = max_nodes_total - current_node_count
        limits.append(left if left > 0 else -1)
    if any(limit < 0 for limit in limits):
        return -1
    return min(limits, default=0)


@dataclass(slots=True)
class Estimate:
    """Nodes needed and the pods they would take, in the order they were placed."""

    node_count: int
    pods: list[Pod]
    nodes_with_pods: list[str] = field(default_factory=list)


def not_named(name: str) -> Callable[[NodeInfo], bool]:
    return lambda info: info.name != name


def uses_hostname_topology_key(pod: Pod) -> bool:
    """Upstream: isPodUsingHostNameTopologyKey (estimator/binpacking_estimator.go)"""
    return any(c.topology_key == LABEL_HOSTNAME for c in pod.spec.topology_spread_constraints)


def has_topology_constraint_error(err: PredicateError) -> bool:
    """Whether PodTopologySpread's reason is among the failure's reasons.

    Upstream: hasTopologyConstraintError (estimator/binpacking_estimator.go)
    """
    return ERR_REASON_CONSTRAINTS_NOT_MATCH in err.status.reasons


class BinpackingEstimator:
    """First-Fit Decreasing onto template nodes, every placement checked by the scheduler.

    Upstream: BinpackingNodeEstimator.Estimate (estimator/binpacking_estimator.go)
    """

    def __init__(self, checker: PredicateChecker, limiter: EstimationLimiter) -> None:
        self.checker = checker
        self.limiter = limiter

    def estimate(self, groups: Sequence[list[Pod]], template: NodeInfo, prefix: str) -> Estimate:
        snapshot = self.checker.snapshot
        self.limiter.start_estimation()
        ordered = decreasing_pod_order(groups, template)
        new_nodes: set[str] = set()
        with_pods: list[str] = []
        placed: list[Pod] = []
        last = ""
        index = 0

        def place(pod: Pod, node_name: str) -> None:
            snapshot.add_pod(with_node_name(pod, node_name), node_name)
            if node_name not in with_pods:
                with_pods.append(node_name)
            placed.append(pod)

        with snapshot.forked():
            for pods in ordered:
                remaining = list(pods)
                # tryToScheduleOnExistingNodes: the new nodes only, until one pod does not fit.
                while remaining:
                    name = self.checker.fits_any_node_matching(
                        remaining[0], lambda info: info.name in new_nodes
                    )
                    if name is None:
                        break
                    place(remaining.pop(0), name)
                # tryToScheduleOnNewNodes
                for pod in remaining:
                    if last:
                        err = self.checker.check_predicates(pod, last)
                        if err is None:
                            place(pod, last)
                            continue
                        # A hostname spread the last node breaks may still let the pod onto
                        # another node, any but the last (an existing one too, which then
                        # counts among the estimate's nodes, as upstream counts it).
                        if uses_hostname_topology_key(pod) and has_topology_constraint_error(err):
                            other = self.checker.fits_any_node_matching(pod, not_named(last))
                            if other is not None:
                                place(pod, other)
                                continue
                    # An empty new node that did not take the pod: another would not either.
                    if last and last not in with_pods:
                        break
                    if not self.limiter.permission_to_add_node():
                        break
                    last = f"{prefix}-e-{index}"
                    index += 1
                    node, ds_pods = copy_template_node(template, last)
                    snapshot.add_node(node, ds_pods)
                    new_nodes.add(last)
                    # The pod may still not fit (a zonal spread constraint): the node stays.
                    if self.checker.check_predicates(pod, last) is not None:
                        break
                    place(pod, last)
        return Estimate(len(with_pods), placed, with_pods)
