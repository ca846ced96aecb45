"""MostAllocated: favour the fullest nodes (bin packing).

Per resource: requested * 100 / allocatable, with requested capped at allocatable (non-zero
defaults can push it beyond); the node's score is the weighted mean, truncated.

Upstream: pkg/scheduler/framework/plugins/noderesources/most_allocated.go (v1.35)
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
    return weighted_mean_scorer(most_requested_score, resources)


__all__ = ["most_requested_score", "most_resource_scorer"]
