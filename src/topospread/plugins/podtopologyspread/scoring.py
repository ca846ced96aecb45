"""PreScore, Score and NormalizeScore: soft (ScheduleAnyway) constraints."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from topospread.api.types import LABEL_HOSTNAME, SCHEDULE_ANYWAY, Pod
from topospread.framework.cycle_state import CycleState, StateKey, StateNotFoundError
from topospread.framework.interface import ScoreExtensions
from topospread.framework.status import SKIP, SUCCESS, Status, as_status
from topospread.framework.types import MAX_NODE_SCORE, NodeInfo, NodeScore
from topospread.labels.selector import SelectorError
from topospread.nodeaffinity import get_required_node_affinity
from topospread.plugins.helper.gomath import go_div, go_round
from topospread.plugins.podtopologyspread.common import (
    NAME,
    InternalConstraint,
    PluginBase,
    count_pods_match_selector,
    node_labels_match_spread_constraints,
)

_INVALID_SCORE: Final = -1


@dataclass(slots=True)
class PreScoreState:
    """What PreScore computed for the soft constraints, read by Score and NormalizeScore.

    ``topology_value_to_pod_counts[i]`` holds a count for every domain of constraint ``i``
    that some filtered node belongs to (hostname constraints are counted per node in Score).
    Upstream: preScoreState (scoring.go, v1.35)
    """

    constraints: list[InternalConstraint] = field(default_factory=list)
    ignored_nodes: set[str] = field(default_factory=set)
    topology_value_to_pod_counts: list[dict[str, int]] = field(default_factory=list)
    topology_normalizing_weight: list[float] = field(default_factory=list)

    def clone(self) -> PreScoreState:
        # Never modified after PreScore, so sharing is safe (upstream returns itself too).
        return self


PRE_SCORE_STATE_KEY: Final[StateKey[PreScoreState]] = StateKey("PreScore" + NAME)


def topology_normalizing_weight(size: int) -> float:
    """log(size + 2): counts in topologies with fewer domains weigh less.

    Upstream: topologyNormalizingWeight (scoring.go, v1.35)
    """
    return math.log(size + 2)


def score_for_count(count: int, max_skew: int, weight: float) -> float:
    """Upstream: scoreForCount (scoring.go, v1.35)."""
    return float(count) * weight + float(max_skew - 1)


class Scoring(PluginBase):
    """PreScore, Score and NormalizeScore of PodTopologySpread."""

    def init_pre_score_state(
        self,
        s: PreScoreState,
        pod: Pod,
        filtered_nodes: Sequence[NodeInfo],
        require_all_topologies: bool,
    ) -> None:
        """Upstream: initPreScoreState (scoring.go, v1.35)."""
        s.constraints = self.get_constraints(pod, SCHEDULE_ANYWAY)
        if not s.constraints:
            return
        s.topology_value_to_pod_counts = [{} for _ in s.constraints]
        for info in filtered_nodes:
            labels = info.node.metadata.labels
            if require_all_topologies and not node_labels_match_spread_constraints(
                labels, s.constraints
            ):
                # Nodes missing a topology key score 0 later.
                s.ignored_nodes.add(info.name)
                continue
            for i, c in enumerate(s.constraints):
                if c.topology_key == LABEL_HOSTNAME:
                    continue  # per-node counts are taken in Score
                # A node without the key (system defaulting only) counts under "".
                s.topology_value_to_pod_counts[i].setdefault(labels.get(c.topology_key, ""), 0)
        s.topology_normalizing_weight = []
        for i, c in enumerate(s.constraints):
            size = len(s.topology_value_to_pod_counts[i])
            if c.topology_key == LABEL_HOSTNAME:
                size = len(filtered_nodes) - len(s.ignored_nodes)
            s.topology_normalizing_weight.append(topology_normalizing_weight(size))

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        """Count matching pods in every domain that holds a filtered node, over all nodes.

        Upstream: PreScore (scoring.go, v1.35)
        """
        all_nodes = self.handle.snapshot_shared_lister().node_infos().list()
        if not all_nodes:
            return SKIP
        s = PreScoreState()
        # Only non-system-default spreading requires every topology label, so that nodes
        # without a zone label still get hostname spreading.
        require_all = bool(pod.spec.topology_spread_constraints) or not self.system_defaulted
        try:
            self.init_pre_score_state(s, pod, nodes, require_all)
        except SelectorError as err:
            prefix = (
                "obtaining pod's soft topology spread constraints"
                if pod.spec.topology_spread_constraints
                else "setting default soft topology spread constraints"
            )
            return as_status(f"calculating preScoreState: {prefix}: {err}")
        if not s.constraints:
            return SKIP
        required = get_required_node_affinity(pod)
        inclusion = self.features.enable_node_inclusion_policy_in_pod_topology_spread
        comparison = self.features.enable_taint_toleration_comparison_operators
        namespace = pod.metadata.namespace
        for info in all_nodes:
            node = info.node
            if not inclusion and not required.match(node):
                continue
            labels = node.metadata.labels
            if require_all and not node_labels_match_spread_constraints(labels, s.constraints):
                continue
            for i, c in enumerate(s.constraints):
                if inclusion and not c.match_node_inclusion_policies(
                    pod, node, required, enable_comparison_operators=comparison
                ):
                    continue
                value = labels.get(c.topology_key, "")
                counts = s.topology_value_to_pod_counts[i]
                if value not in counts:
                    continue
                counts[value] += count_pods_match_selector(info.pods, c.selector, namespace)
        state.write(PRE_SCORE_STATE_KEY, s)
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        """The raw score: the weighted matching count of the node's domains (lower is better).

        Upstream: Score (scoring.go, v1.35)
        """
        try:
            s = state.read(PRE_SCORE_STATE_KEY)
        except StateNotFoundError as err:
            return 0, as_status(f'error reading "{err.args[0]}" from cycleState: not found')
        if node_info.name in s.ignored_nodes:
            return 0, SUCCESS
        labels = node_info.node.metadata.labels
        total = 0.0
        for i, c in enumerate(s.constraints):
            value = labels.get(c.topology_key)
            if value is None:
                continue
            if c.topology_key == LABEL_HOSTNAME:
                count = count_pods_match_selector(
                    node_info.pods, c.selector, pod.metadata.namespace
                )
            else:
                count = s.topology_value_to_pod_counts[i][value]
            total += score_for_count(count, c.max_skew, s.topology_normalizing_weight[i])
        return go_round(total), SUCCESS

    def score_extensions(self) -> ScoreExtensions | None:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status:
        """Invert and scale to 0..100: the node with the fewest matching pods scores highest.

        Upstream: NormalizeScore (scoring.go, v1.35)
        """
        try:
            s = state.read(PRE_SCORE_STATE_KEY)
        except StateNotFoundError as err:
            return as_status(f'error reading "{err.args[0]}" from cycleState: not found')
        min_score = 2**63 - 1
        max_score = 0
        for ns in scores:
            if ns.name in s.ignored_nodes:
                ns.score = _INVALID_SCORE
                continue
            min_score = min(min_score, ns.score)
            max_score = max(max_score, ns.score)
        for ns in scores:
            if ns.score == _INVALID_SCORE:
                ns.score = 0
            elif max_score == 0:
                ns.score = MAX_NODE_SCORE
            else:
                ns.score = go_div(MAX_NODE_SCORE * (max_score + min_score - ns.score), max_score)
        return SUCCESS
