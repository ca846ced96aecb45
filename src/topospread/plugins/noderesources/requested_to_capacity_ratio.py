"""RequestedToCapacityRatio: score each resource's utilization through a user-given shape.

The shape maps utilization (0..100) to a score (0..10, scaled by 10 to the node score range),
linearly between its points and flat outside them. A resource whose request exceeds the node
(or that the node lacks in this function's view) scores as full utilization. Resources scoring
0 do not count towards the weighted mean, which is rounded half away from zero.

Upstream: pkg/scheduler/framework/plugins/noderesources/requested_to_capacity_ratio.go and
pkg/scheduler/framework/plugins/helper/shape_score.go (v1.35)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from topospread.framework.types import MAX_NODE_SCORE
from topospread.plugins.helper.gomath import go_div, go_int64, go_round
from topospread.plugins.noderesources.args import (
    MAX_CUSTOM_PRIORITY_SCORE,
    ResourceSpec,
    UtilizationShapePoint,
)
from topospread.plugins.noderesources.resource_allocation import (
    Scorer,
)

MAX_UTILIZATION: Final = 100


@dataclass(frozen=True, slots=True)
class BrokenLinearFunction:
    """f(p) over (utilization, score) points: the first score below the first point, the last
    above the last one, integer-interpolated (truncating) in between. A class, not a closure,
    so that simulations holding it can be snapshotted (pickled).

    Upstream: BuildBrokenLinearFunction (plugins/helper/shape_score.go, v1.35)
    """

    points: tuple[tuple[int, int], ...]

    def __call__(self, p: int) -> int:
        points = self.points
        for i, (utilization, score) in enumerate(points):
            if p <= utilization:
                if i == 0:
                    return points[0][1]
                prev_u, prev_s = points[i - 1]
                return prev_s + go_div(
                    go_int64((score - prev_s) * (p - prev_u)), utilization - prev_u
                )
        return points[-1][1]


def build_broken_linear_function(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """Upstream: BuildBrokenLinearFunction (plugins/helper/shape_score.go, v1.35)"""
    return BrokenLinearFunction(tuple(shape))


@dataclass(frozen=True, slots=True)
class _RatioScorer:
    """The Scorer of requested_to_capacity_ratio_scorer (a class: snapshots pickle it)."""

    raw: Callable[[int], int]
    weights: tuple[int, ...]

    def resource_score(self, requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return self.raw(MAX_UTILIZATION)
        return self.raw(go_div(go_int64(requested * MAX_UTILIZATION), capacity))

    def __call__(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        weights = self.weights
        node_score = 0
        weight_sum = 0
        for i, req in enumerate(requested):
            if allocatable[i] == 0:
                continue
            score = self.resource_score(req, allocatable[i])
            if score > 0:
                node_score += score * weights[i]
                weight_sum += weights[i]
        if weight_sum == 0:
            return 0
        return go_round(float(node_score) / float(weight_sum))


def requested_to_capacity_ratio_scorer(
    resources: Sequence[ResourceSpec], shape: Sequence[UtilizationShapePoint]
) -> Scorer:
    """Upstream: requestedToCapacityRatioScorer and buildRequestedToCapacityRatioScorerFunction
    (requested_to_capacity_ratio.go, v1.35)
    """
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    raw = build_broken_linear_function([(p.utilization, p.score * scale) for p in shape])
    return _RatioScorer(raw, tuple(r.weight for r in resources))


__all__ = [
    "MAX_UTILIZATION",
    "build_broken_linear_function",
    "requested_to_capacity_ratio_scorer",
]
