"""TaintToleration: NoSchedule/NoExecute taints filter, PreferNoSchedule taints score.

Upstream: pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go (v1.35)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from topospread.api.types import TAINT_EFFECT_PREFER_NO_SCHEDULE, Node, Pod, Taint, Toleration
from topospread.framework.cycle_state import CycleState, StateKey, StateNotFoundError
from topospread.framework.features import Features
from topospread.framework.interface import Handle, QueueingHint, ScoreExtensions
from topospread.framework.status import SUCCESS, Code, Status, as_status, new_status
from topospread.framework.types import MAX_NODE_SCORE, NodeInfo, NodeScore
from topospread.plugins.helper.normalize_score import default_normalize_score
from topospread.taints import (
    do_not_schedule_taints_filter,
    find_matching_untolerated_taint,
    tolerations_tolerate_taint,
)

NAME: Final = "TaintToleration"

# Since v1.35 (kubernetes#134740, also in v1.34.2+) the reason no longer names the taint:
# taint keys and values may be sensitive, so they go to the scheduler's log only.
ERR_REASON_UNTOLERATED: Final = "node(s) had untolerated taint(s)"
# Upstream still exports this constant; no extension point returns it.
ERR_REASON_NOT_MATCH: Final = "node(s) had taints that the pod didn't tolerate"


@dataclass(frozen=True, slots=True)
class PreScoreState:
    """The pod's tolerations that can tolerate PreferNoSchedule taints.

    Upstream: preScoreState (taint_toleration.go, v1.35)
    """

    tolerations_prefer_no_schedule: tuple[Toleration, ...]

    def clone(self) -> PreScoreState:
        # Immutable and independent of the pods on nodes.
        return self


PRE_SCORE_STATE_KEY: Final[StateKey[PreScoreState]] = StateKey("PreScore" + NAME)


def get_all_toleration_prefer_no_schedule(
    tolerations: Sequence[Toleration],
) -> tuple[Toleration, ...]:
    """Tolerations whose effect is PreferNoSchedule or empty (an empty effect means all).

    Upstream: getAllTolerationPreferNoSchedule (taint_toleration.go, v1.35)
    """
    return tuple(t for t in tolerations if t.effect in ("", TAINT_EFFECT_PREFER_NO_SCHEDULE))


class TaintToleration:
    """Checks that a pod tolerates a node's taints and prefers nodes it tolerates better."""

    def __init__(self, handle: Handle | None, features: Features) -> None:
        self.handle = handle
        self._comparison_operators = features.enable_taint_toleration_comparison_operators

    @property
    def name(self) -> str:
        return NAME

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Reject the node when one of its NoSchedule/NoExecute taints is not tolerated.

        Upstream: TaintToleration.Filter (taint_toleration.go, v1.35)
        """
        taint = find_matching_untolerated_taint(
            node_info.node.spec.taints,
            pod.spec.tolerations,
            do_not_schedule_taints_filter,
            enable_comparison_operators=self._comparison_operators,
        )
        if taint is None:
            return SUCCESS
        return new_status(Code.UnschedulableAndUnresolvable, ERR_REASON_UNTOLERATED)

    def is_schedulable_after_node_change(
        self, pod: Pod, old: Node | None, new: Node | None
    ) -> QueueingHint:
        """Queue when a node the pod did not tolerate (or a new one) now carries no taint the
        pod does not tolerate; a deleted node never helps (the plugin registers no NodeDelete).

        Upstream: isSchedulableAfterNodeChange (taint_toleration.go, v1.35)
        """
        if new is None:
            return QueueingHint.QueueSkip

        def untolerated(node: Node) -> bool:
            taint = find_matching_untolerated_taint(
                node.spec.taints,
                pod.spec.tolerations,
                do_not_schedule_taints_filter,
                enable_comparison_operators=self._comparison_operators,
            )
            return taint is not None

        was = old is None or untolerated(old)
        if was and not untolerated(new):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        """Upstream: TaintToleration.PreScore (taint_toleration.go, v1.35); never skips."""
        state.write(
            PRE_SCORE_STATE_KEY,
            PreScoreState(get_all_toleration_prefer_no_schedule(pod.spec.tolerations)),
        )
        return SUCCESS

    def count_intolerable_taints_prefer_no_schedule(
        self, taints: Sequence[Taint], tolerations: Sequence[Toleration]
    ) -> int:
        """PreferNoSchedule taints that none of the tolerations tolerates.

        Upstream: countIntolerableTaintsPreferNoSchedule (taint_toleration.go, v1.35)
        """
        count = 0
        for taint in taints:
            if taint.effect != TAINT_EFFECT_PREFER_NO_SCHEDULE:
                continue
            if not tolerations_tolerate_taint(
                tolerations, taint, enable_comparison_operators=self._comparison_operators
            ):
                count += 1
        return count

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        """The raw score: the node's intolerable PreferNoSchedule taints (fewer is better).

        Upstream: TaintToleration.Score (taint_toleration.go, v1.35)
        """
        try:
            s = state.read(PRE_SCORE_STATE_KEY)
        except StateNotFoundError as err:
            return 0, as_status(f'failed to read "{err.args[0]}" from cycleState: not found')
        count = self.count_intolerable_taints_prefer_no_schedule(
            node_info.node.spec.taints, s.tolerations_prefer_no_schedule
        )
        return count, SUCCESS

    def score_extensions(self) -> ScoreExtensions | None:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status:
        """Reverse scaling: the node with the most intolerable taints scores 0.

        Upstream: TaintToleration.NormalizeScore (taint_toleration.go, v1.35)
        """
        return default_normalize_score(MAX_NODE_SCORE, True, scores)


def new(args: Any | None, handle: Handle, features: Features) -> TaintToleration:
    """TaintToleration takes no args. Upstream: New (taint_toleration.go, v1.35)."""
    return TaintToleration(handle, features)
