"""NodeResourcesBalancedAllocation: favour nodes whose resources would be used evenly.

Each resource's utilization with the pod (plain requests, capped at 1) is a fraction; the score
is (1 - their standard deviation) * 100, truncated: for two resources the deviation is half
their difference. Pods that request none of the resources are skipped at PreScore, so that
best-effort pods do not all pile onto one balanced node (kubernetes#129138).

v1.35 scores only the balance *after* placing the pod; the "improvement" formula is v1.36's.

Upstream: pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go (v1.35)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from topospread.api.types import Pod
from topospread.framework.cycle_state import CycleState, StateKey, StateNotFoundError
from topospread.framework.features import Features
from topospread.framework.interface import Handle
from topospread.framework.status import SKIP, SUCCESS, Status
from topospread.framework.types import MAX_NODE_SCORE, NodeInfo
from topospread.plugins.noderesources.args import (
    NodeResourcesBalancedAllocationArgs,
    config_error,
    decode_node_resources_balanced_allocation_args,
    validate_node_resources_balanced_allocation_args,
)
from topospread.plugins.noderesources.resource_allocation import (
    ResourceAllocationScorer,
    is_best_effort_pod,
)
from topospread.plugins.noderesources.resource_helpers import pod_level_enabled

BALANCED_ALLOCATION_NAME: Final = "NodeResourcesBalancedAllocation"


@dataclass(slots=True)
class BalancedAllocationPreScoreState:
    """Upstream: balancedAllocationPreScoreState (balanced_allocation.go, v1.35)."""

    pod_requests: list[int]

    def clone(self) -> BalancedAllocationPreScoreState:
        # Never modified after PreScore, so sharing is safe (upstream returns itself too).
        return self


BALANCED_ALLOCATION_PRE_SCORE_STATE_KEY: Final[StateKey[BalancedAllocationPreScoreState]] = (
    StateKey("PreScore" + BALANCED_ALLOCATION_NAME)
)


def balanced_resource_scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """(1 - std of the utilization fractions) * 100, truncated toward zero.

    Upstream: balancedResourceScorer (balanced_allocation.go, v1.35)
    """
    fractions: list[float] = []
    total = 0.0
    for req, alloc in zip(requested, allocatable, strict=True):
        if alloc == 0:
            continue
        fraction = float(req) / float(alloc)
        if fraction > 1:
            fraction = 1.0
        total += fraction
        fractions.append(fraction)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        squares = 0.0
        for fraction in fractions:
            squares = squares + (fraction - mean) * (fraction - mean)
        std = math.sqrt(squares / len(fractions))
    return int((1 - std) * float(MAX_NODE_SCORE))


class BalancedAllocation:
    """Scores nodes by how evenly the configured resources would be used.

    ``args`` must be defaulted (see ``decode_node_resources_balanced_allocation_args``).
    Upstream: BalancedAllocation and NewBalancedAllocation (balanced_allocation.go, v1.35)
    """

    def __init__(
        self,
        args: NodeResourcesBalancedAllocationArgs,
        handle: Handle | None,
        features: Features,
    ) -> None:
        self.handle = handle
        self.features = features
        self.scorer = ResourceAllocationScorer(
            name=BALANCED_ALLOCATION_NAME,
            scorer=balanced_resource_scorer,
            resources=list(args.resources),
            features=features,
            use_requested=True,
            enable_pod_level_resources=pod_level_enabled(features),
        )

    @property
    def name(self) -> str:
        return BALANCED_ALLOCATION_NAME

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        """Skip best-effort pods. Upstream: BalancedAllocation.PreScore (v1.35)."""
        requests = self.scorer.calculate_pod_resource_request_list(pod)
        if is_best_effort_pod(requests):
            return SKIP
        state.write(
            BALANCED_ALLOCATION_PRE_SCORE_STATE_KEY, BalancedAllocationPreScoreState(requests)
        )
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        """Upstream: BalancedAllocation.Score (balanced_allocation.go, v1.35)."""
        try:
            requests = state.read(BALANCED_ALLOCATION_PRE_SCORE_STATE_KEY).pod_requests
        except StateNotFoundError:
            requests = self.scorer.calculate_pod_resource_request_list(pod)
            if is_best_effort_pod(requests):
                return 0, SUCCESS
        return self.scorer.score(pod, node_info, requests)

    def score_extensions(self) -> None:
        return None


def new_balanced_allocation(
    args: Any | None, handle: Handle, features: Features
) -> BalancedAllocation:
    """Decode, default and validate the args, then build the plugin.

    Upstream: NewBalancedAllocation (balanced_allocation.go, v1.35)
    """
    parsed = decode_node_resources_balanced_allocation_args(args)
    errors = validate_node_resources_balanced_allocation_args(parsed)
    if errors:
        raise config_error(errors)
    return BalancedAllocation(parsed, handle, features)


__all__ = [
    "BALANCED_ALLOCATION_NAME",
    "BALANCED_ALLOCATION_PRE_SCORE_STATE_KEY",
    "BalancedAllocation",
    "BalancedAllocationPreScoreState",
    "balanced_resource_scorer",
    "new_balanced_allocation",
]
