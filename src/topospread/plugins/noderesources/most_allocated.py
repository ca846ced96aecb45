"""MostAllocated: favour the fullest nodes (bin packing).

Per resource: requested * 100 / allocatable, with requested capped at allocatable (non-zero
defaults can push it beyond); the node's score is the weighted mean, truncated.

Upstream: pkg/scheduler/framework/plugins/noderesources/most_allocated.go (v1.35)
"""

from __future__ import annotations

from collections.abc import Sequence

from topospread.framework.types import MAX_NODE_SCORE
from topospread.plugins.noderesources.args import ResourceSpec
from topospread.plugins.noderesources.resource_allocation import Scorer, go_div, go_int64


def most_requested_score(requested: int, capacity: int) -> int:
    """Used capacity on a 0..100 scale. Upstream: mostRequestedScore (most_allocated.go)."""
    if capacity == 0:
        return 0
    requested = min(requested, capacity)
    return go_div(go_int64(requested * MAX_NODE_SCORE), capacity)


def most_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """The weighted mean of ``most_requested_score`` over resources the node has.

    Upstream: mostResourceScorer (most_allocated.go, v1.35)
    """
    weights = [r.weight for r in resources]

    def scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = 0
        weight_sum = 0
        for i, req in enumerate(requested):
            if allocatable[i] == 0:
                continue
            node_score += most_requested_score(req, allocatable[i]) * weights[i]
            weight_sum += weights[i]
        if weight_sum == 0:
            return 0
        return go_div(go_int64(node_score), weight_sum)

    return scorer


__all__ = ["most_requested_score", "most_resource_scorer"]
