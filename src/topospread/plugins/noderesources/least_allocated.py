"""LeastAllocated: favour nodes with the most room left (the default strategy).

Per resource: (allocatable - requested) * 100 / allocatable, 0 once requested exceeds
allocatable; the node's score is the weighted mean, truncated.

Upstream: pkg/scheduler/framework/plugins/noderesources/least_allocated.go (v1.35)
"""

from __future__ import annotations

from collections.abc import Sequence

from topospread.framework.types import MAX_NODE_SCORE
from topospread.plugins.helper.gomath import go_div, go_int64
from topospread.plugins.noderesources.args import ResourceSpec
from topospread.plugins.noderesources.resource_allocation import (
    Scorer,
    weighted_mean_scorer,
)


def least_requested_score(requested: int, capacity: int) -> int:
    """Unused capacity on a 0..100 scale. Upstream: leastRequestedScore (least_allocated.go)."""
    if capacity == 0 or requested > capacity:
        return 0
    return go_div(go_int64((capacity - requested) * MAX_NODE_SCORE), capacity)


def least_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """The weighted mean of ``least_requested_score`` over resources the node has.

    Upstream: leastResourceScorer (least_allocated.go, v1.35)
    """
    return weighted_mean_scorer(least_requested_score, resources)


__all__ = ["least_requested_score", "least_resource_scorer"]
