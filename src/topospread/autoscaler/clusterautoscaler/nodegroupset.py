"""Similar node groups and the balancing of a scale-up across them.

With ``--balance-similar-node-groups``, a scale-up chosen for one group is split across every
group whose template is the same machine (same capacity, allocatable and free resources within a
few percent, same labels but for the zone, hostname and a few provider labels), smallest group
first, so per-zone groups grow together.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from topospread.api.resource import Quantity, parse_quantity
from topospread.autoscaler.clusterautoscaler.nodegroup import NODE_GROUP_LABEL, NodeGroup
from topospread.framework.types import NodeInfo
from topospread.plugins.noderesources.resource_helpers import pod_requests

# Upstream: compare_nodegroups.go's tolerances.
MAX_ALLOCATABLE_DIFFERENCE_RATIO: Final = 0.05
MAX_FREE_DIFFERENCE_RATIO: Final = 0.05
MAX_CAPACITY_MEMORY_DIFFERENCE_RATIO: Final = 0.015

# Upstream: BasicIgnoredLabels (compare_nodegroups.go), plus this model's group label.
BASIC_IGNORED_LABELS: Final = frozenset(
    {
        "kubernetes.io/hostname",
        "failure-domain.beta.kubernetes.io/zone",
        "failure-domain.beta.kubernetes.io/region",
        "topology.kubernetes.io/zone",
        "topology.kubernetes.io/region",
        "beta.kubernetes.io/fluentd-ds-ready",
        "kops.k8s.io/instancegroup",
        NODE_GROUP_LABEL,
    }
)


def _within_tolerance(a: Quantity, b: Quantity, ratio: float) -> bool:
    larger = float(max(a.milli_value(), b.milli_value()))
    smaller = float(min(a.milli_value(), b.milli_value()))
    return larger - smaller <= larger * ratio


def _quantities(resources: Mapping[str, str | int | float]) -> dict[str, Quantity]:
    return {name: parse_quantity(v) for name, v in resources.items()}


def _free(info: NodeInfo) -> dict[str, Quantity]:
    """Allocatable minus the pods' requests, for the resources NodeInfo.Requested lists: cpu,
    memory, ephemeral-storage, pods (requested 0) and every requested scalar resource."""
    allocatable = _quantities(info.node.status.allocatable)
    requested: dict[str, int] = {"cpu": 0, "memory": 0, "ephemeral-storage": 0, "pods": 0}
    for pod in info.pods:
        for name, q in pod_requests(pod).items():
            if name == "cpu":
                requested[name] += q.milli_value()
            else:
                requested[name] = requested.get(name, 0) + q.value()
    free = {}
    for name, amount in requested.items():
        have = allocatable.get(name, Quantity())
        if name == "cpu":
            free[name] = Quantity.new_milli_quantity(have.milli_value() - amount)
        else:
            free[name] = Quantity.new_quantity(have.value() - amount)
    return free


def _maps_within_tolerance(
    a: Mapping[str, Quantity], b: Mapping[str, Quantity], ratio: float
) -> bool:
    if set(a) != set(b):
        return False
    return all(_within_tolerance(a[k], b[k], ratio) for k in a)


def _labels_match(a: Mapping[str, str], b: Mapping[str, str], ignored: Iterable[str]) -> bool:
    skip = set(ignored)
    return {k: v for k, v in a.items() if k not in skip} == {
        k: v for k, v in b.items() if k not in skip
    }


def is_node_info_similar(n1: NodeInfo, n2: NodeInfo, ignored_labels: Iterable[str]) -> bool:
    """Whether two groups' templates are the same kind of machine: capacity equal (memory
    within 1.5%), allocatable and free within 5%, labels equal but for the ignored ones.

    Upstream: IsCloudProviderNodeInfoSimilar (processors/nodegroupset/compare_nodegroups.go)
    """
    c1 = _quantities(n1.node.status.capacity)
    c2 = _quantities(n2.node.status.capacity)
    if set(c1) != set(c2):
        return False
    for name, q in c1.items():
        if name == "memory":
            if not _within_tolerance(q, c2[name], MAX_CAPACITY_MEMORY_DIFFERENCE_RATIO):
                return False
        elif q.cmp(c2[name]) != 0:
            return False
    a1 = _quantities(n1.node.status.allocatable)
    a2 = _quantities(n2.node.status.allocatable)
    if not _maps_within_tolerance(a1, a2, MAX_ALLOCATABLE_DIFFERENCE_RATIO):
        return False
    if not _maps_within_tolerance(_free(n1), _free(n2), MAX_FREE_DIFFERENCE_RATIO):
        return False
    return _labels_match(n1.node.metadata.labels, n2.node.metadata.labels, ignored_labels)


def generic_ignored_labels(extra: Iterable[str] = ()) -> frozenset[str]:
    """Upstream: CreateGenericNodeInfoComparator's ignored labels (basic plus
    --balancing-ignore-label)."""
    return BASIC_IGNORED_LABELS | frozenset(extra)


def find_similar_node_groups(
    group: NodeGroup,
    groups: Sequence[NodeGroup],
    infos: Mapping[str, NodeInfo],
    ignored_labels: Iterable[str],
) -> list[NodeGroup]:
    """Every other group whose template is similar to ``group``'s.

    Upstream: BalancingNodeGroupSetProcessor.FindSimilarNodeGroups
    """
    info = infos.get(group.name)
    if info is None:
        return []
    ignored = frozenset(ignored_labels)
    return [
        g
        for g in groups
        if g.name != group.name
        and g.name in infos
        and is_node_info_similar(info, infos[g.name], ignored)
    ]


@dataclass(slots=True)
class ScaleUpInfo:
    """One group's resize. Upstream: nodegroupset.ScaleUpInfo."""

    group: str
    current_size: int
    new_size: int
    max_size: int

    @property
    def delta(self) -> int:
        return self.new_size - self.current_size


def balance_scale_up_between_groups(
    groups: Sequence[NodeGroup], new_nodes: int
) -> list[ScaleUpInfo]:
    """``new_nodes`` spread over the groups, each new node to the currently smallest group that
    is below its max size (ties in the order given, after a stable sort by size), capped at the
    groups' free capacity; only the groups that grow are returned.

    Upstream: BalancingNodeGroupSetProcessor.BalanceScaleUpBetweenGroups
    """
    infos = [
        ScaleUpInfo(g.name, g.target_size, g.target_size, g.max_size)
        for g in groups
        if g.target_size < g.max_size
    ]
    capacity = sum(i.max_size - i.current_size for i in infos)
    new_nodes = min(new_nodes, capacity)
    infos.sort(key=lambda i: i.current_size)
    for _ in range(new_nodes):
        open_infos = [i for i in infos if i.new_size < i.max_size]
        smallest = min(open_infos, key=lambda i: i.new_size)
        smallest.new_size += 1
    return [i for i in infos if i.new_size != i.current_size]
