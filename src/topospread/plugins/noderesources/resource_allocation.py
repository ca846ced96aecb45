"""The machinery NodeResourcesFit's scoring strategies and BalancedAllocation share.

For each configured resource the scorer pairs the node's allocatable with what the node would
have requested once the pod is there, and hands both lists to a strategy's function. Resources
the node does not have (allocatable 0) are left out, and so are scalar resources (extended,
hugepages...) the pod does not request.

Which node total counts depends on the plugin: NodeResourcesFit's strategies use the totals in
which a container without a cpu or memory request counts 100m / 200Mi (``NonZeroRequested``),
so that many request-less pods do not all land on one node; BalancedAllocation uses the plain
requests. ephemeral-storage and scalar resources always use the plain requests.

Upstream: pkg/scheduler/framework/plugins/noderesources/resource_allocation.go (v1.35)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from topospread.api.resource import ZERO
from topospread.api.resource_names import (
    RESOURCE_CPU,
    RESOURCE_EPHEMERAL_STORAGE,
    RESOURCE_MEMORY,
    is_scalar_resource_name,
)
from topospread.api.types import Pod
from topospread.framework.features import Features
from topospread.framework.status import SUCCESS, Code, Status, new_status
from topospread.framework.types import NodeInfo
from topospread.plugins.helper.gomath import go_div, go_int64
from topospread.plugins.noderesources.args import ResourceSpec
from topospread.plugins.noderesources.resource_helpers import (
    DEFAULT_NON_MISSING_REQUESTS,
    NodeResources,
    node_resources,
    pod_requests,
)

# Scorer: (requested, allocatable) per configured resource -> a node score in [0, 100].
Scorer = Callable[[Sequence[int], Sequence[int]], int]


@dataclass(frozen=True, slots=True)
class _WeightedMean:
    """A picklable Scorer (simulations are copied by pickling): see weighted_mean_scorer."""

    per_resource: Callable[[int, int], int]
    weights: tuple[int, ...]

    def __call__(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        weights = self.weights
        node_score = 0
        weight_sum = 0
        for i, req in enumerate(requested):
            if allocatable[i] == 0:
                continue
            node_score += self.per_resource(req, allocatable[i]) * weights[i]
            weight_sum += weights[i]
        if weight_sum == 0:
            return 0
        return go_div(go_int64(node_score), weight_sum)


def weighted_mean_scorer(
    per_resource: Callable[[int, int], int], resources: Sequence[ResourceSpec]
) -> Scorer:
    """The weighted mean of ``per_resource(requested, allocatable)`` over the resources the
    node has (allocatable > 0), truncated as Go's integer division truncates.

    Upstream: the shared shape of leastResourceScorer and mostResourceScorer (v1.35)
    """
    return _WeightedMean(per_resource, tuple(r.weight for r in resources))


ERR_RESOURCES_NOT_FOUND: Final = "resources not found"


@dataclass(slots=True)
class ResourceAllocationScorer:
    """A strategy's function over the configured resources.

    ``use_requested`` picks plain requests over the non-zero ones for cpu and memory;
    ``enable_pod_level_resources`` says whether the *incoming* pod's pod-level requests count
    (bound pods' always follow the PodLevelResources gate, as NodeInfo's accounting does).
    Upstream: resourceAllocationScorer (resource_allocation.go, v1.35)
    """

    name: str
    scorer: Scorer
    resources: Sequence[ResourceSpec]
    features: Features
    use_requested: bool = False
    enable_pod_level_resources: bool = False

    def score(
        self, pod: Pod, node_info: NodeInfo, pod_requests: Sequence[int]
    ) -> tuple[int, Status]:
        """Upstream: resourceAllocationScorer.score (resource_allocation.go, v1.35)."""
        if not self.resources:
            return 0, new_status(Code.Error, ERR_RESOURCES_NOT_FOUND)
        totals = node_resources(node_info, self.features)
        requested = [0] * len(self.resources)
        allocatable = [0] * len(self.resources)
        for i, spec in enumerate(self.resources):
            alloc, req = self.calculate_resource_allocatable_request(
                totals, spec.name, pod_requests[i]
            )
            if alloc == 0:
                continue
            allocatable[i] = alloc
            requested[i] = req
        return self.scorer(requested, allocatable), SUCCESS

    def calculate_resource_allocatable_request(
        self, totals: NodeResources, resource: str, pod_request: int
    ) -> tuple[int, int]:
        """(node allocatable, node requested + pod request) for one resource; (0, 0) leaves
        the resource out (a scalar resource the pod does not request, or one the node lacks).

        Upstream: calculateResourceAllocatableRequest (resource_allocation.go, v1.35)
        """
        requested = totals.requested if self.use_requested else totals.non_zero_requested
        if pod_request == 0 and is_scalar_resource_name(resource):
            return 0, 0
        alloc = totals.allocatable
        if resource == RESOURCE_CPU:
            return alloc.milli_cpu, go_int64(requested.milli_cpu + pod_request)
        if resource == RESOURCE_MEMORY:
            return alloc.memory, go_int64(requested.memory + pod_request)
        if resource == RESOURCE_EPHEMERAL_STORAGE:
            return alloc.ephemeral_storage, go_int64(
                totals.requested.ephemeral_storage + pod_request
            )
        if resource in alloc.scalar_resources:
            return alloc.scalar_resources[resource], go_int64(
                totals.requested.scalar_resources.get(resource, 0) + pod_request
            )
        return 0, 0

    def calculate_pod_resource_request_list(self, pod: Pod) -> list[int]:
        """The pod's request of each configured resource (millicores for cpu), overhead
        included; without ``use_requested`` a container's missing cpu / memory counts as
        100m / 200Mi.

        Upstream: calculatePodResourceRequestList, calculatePodResourceRequest
        (resource_allocation.go, v1.35)
        """
        reqs = pod_requests(
            pod,
            skip_pod_level_resources=not self.enable_pod_level_resources,
            non_missing_container_requests=(
                {} if self.use_requested else DEFAULT_NON_MISSING_REQUESTS
            ),
        )
        out: list[int] = []
        for spec in self.resources:
            q = reqs.get(spec.name, ZERO)
            out.append(q.milli_value() if spec.name == RESOURCE_CPU else q.value())
        return out


def is_best_effort_pod(pod_requests: Sequence[int]) -> bool:
    """No request at all among the configured resources.

    Upstream: resourceAllocationScorer.isBestEffortPod (resource_allocation.go, v1.35)
    """
    return all(r == 0 for r in pod_requests)


__all__ = [
    "ERR_RESOURCES_NOT_FOUND",
    "ResourceAllocationScorer",
    "Scorer",
    "is_best_effort_pod",
]
