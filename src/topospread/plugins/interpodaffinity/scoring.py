"""PreScore, Score and NormalizeScore: preferred affinity and anti-affinity, both ways.

For every existing pod on a labelled node, PreScore adds to the pod's node's value of each
matched term's topology key:

- ``+weight`` / ``-weight`` when the existing pod matches a preferred affinity / anti-affinity
  term of the incoming pod;
- ``+hardPodAffinityWeight`` when the incoming pod matches a *required* affinity term of the
  existing pod (the symmetric weight; 0 turns it off);
- ``+weight`` / ``-weight`` when the incoming pod matches a preferred affinity / anti-affinity
  term of the existing pod.

A node's raw score sums the entries of its own label values; NormalizeScore maps the raw scores
linearly onto 0..100 (lowest 0, highest 100; all equal: all 0).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from topospread.api.types import Node, Pod
from topospread.framework.cycle_state import CycleState, StateKey, StateNotFoundError
from topospread.framework.interface import ScoreExtensions
from topospread.framework.status import SKIP, SUCCESS, Status, as_status
from topospread.framework.types import MAX_NODE_SCORE, NodeInfo, NodeScore
from topospread.plugins.interpodaffinity.common import NAME, PluginBase
from topospread.plugins.interpodaffinity.terms import (
    AffinityTerm,
    NamespaceLabels,
    PodAffinityTerms,
    WeightedAffinityTerm,
    has_pod_affinity,
)

PRE_SCORE_STATE_KEY_NAME: Final = "PreScore" + NAME

ScoreMap = dict[str, dict[str, int]]
"""topology key -> topology value -> accumulated weight (Upstream: scoreMap, scoring.go)."""


def process_term(
    scores: ScoreMap,
    term: AffinityTerm,
    weight: int,
    pod: Pod,
    namespace_labels: NamespaceLabels,
    node: Node,
    multiplier: int,
) -> None:
    """Add ``weight * multiplier`` at the node's value of the term's key when ``pod`` matches.

    Upstream: scoreMap.processTerm (scoring.go, v1.35)
    """
    if not term.matches(pod, namespace_labels):
        return
    tv = node.metadata.labels.get(term.topology_key)
    if tv is None:
        return
    values = scores.setdefault(term.topology_key, {})
    values[tv] = values.get(tv, 0) + weight * multiplier


def process_terms(
    scores: ScoreMap,
    terms: Iterable[WeightedAffinityTerm],
    pod: Pod,
    namespace_labels: NamespaceLabels,
    node: Node,
    multiplier: int,
) -> None:
    """Upstream: scoreMap.processTerms (scoring.go, v1.35)."""
    for t in terms:
        process_term(scores, t.term, t.weight, pod, namespace_labels, node, multiplier)


def has_preferred_constraints(pod: Pod) -> bool:
    """Whether the pod has preferred affinity or preferred anti-affinity terms.

    Upstream: hasPreferredAffinityConstraints || hasPreferredAntiAffinityConstraints in PreScore
    (scoring.go, v1.35)
    """
    affinity = pod.spec.affinity
    return affinity is not None and bool(
        (
            affinity.pod_affinity is not None
            and affinity.pod_affinity.preferred_during_scheduling_ignored_during_execution
        )
        or (
            affinity.pod_anti_affinity is not None
            and affinity.pod_anti_affinity.preferred_during_scheduling_ignored_during_execution
        )
    )


@dataclass(slots=True)
class PreScoreState:
    """The weights PreScore accumulated per topology pair, read by Score.

    Upstream: preScoreState (scoring.go, v1.35)
    """

    topology_score: ScoreMap = field(default_factory=dict)

    def clone(self) -> PreScoreState:
        # Never modified after PreScore, so sharing is safe (upstream returns itself too).
        return self


PRE_SCORE_STATE_KEY: Final[StateKey[PreScoreState]] = StateKey(PRE_SCORE_STATE_KEY_NAME)


class Scoring(PluginBase):
    """PreScore, Score and NormalizeScore of InterPodAffinity."""

    def process_existing_pod(
        self,
        scores: ScoreMap,
        incoming: Pod,
        incoming_terms: PodAffinityTerms,
        existing: Pod,
        node: Node,
        namespace_labels: NamespaceLabels,
    ) -> None:
        """Add what one existing pod contributes, in both directions.

        Upstream: processExistingPod (scoring.go, v1.35)
        """
        if not node.metadata.labels:
            return
        # The incoming pod's preferred terms against the existing pod.
        process_terms(
            scores, incoming_terms.preferred_affinity_terms, existing, namespace_labels, node, 1
        )
        process_terms(
            scores,
            incoming_terms.preferred_anti_affinity_terms,
            existing,
            namespace_labels,
            node,
            -1,
        )
        # The existing pod's terms against the incoming pod.
        existing_terms = self.terms_cache.get(existing)
        weight = self.args.weight
        if weight > 0:
            for t in existing_terms.required_affinity_terms:
                process_term(scores, t, weight, incoming, namespace_labels, node, 1)
        process_terms(
            scores, existing_terms.preferred_affinity_terms, incoming, namespace_labels, node, 1
        )
        process_terms(
            scores,
            existing_terms.preferred_anti_affinity_terms,
            incoming,
            namespace_labels,
            node,
            -1,
        )

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        """Accumulate the weights over every node of the cluster; Skip when none apply.

        Upstream: PreScore (scoring.go, v1.35)
        """
        has_constraints = has_preferred_constraints(pod)
        if self.args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return SKIP
        terms = self.terms_cache.get(pod)
        if terms.parse_error:
            # Ideally never reached: PreFilter rejects such pods first.
            return as_status(f"failed to parse pod: {terms.parse_error}")
        namespace_labels = self.namespace_labels()
        scores: ScoreMap = {}
        for info in self.handle.snapshot_shared_lister().node_infos().list():
            node = info.node
            for existing in info.pods:
                # Without preferred terms of its own, only pods with affinity can contribute.
                if not has_constraints and not has_pod_affinity(existing):
                    continue
                self.process_existing_pod(scores, pod, terms, existing, node, namespace_labels)
        if not scores:
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(scores))
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        """The sum of the weights at the node's values of the scored topology keys.

        Positive for affinity, negative for anti-affinity; normalized afterwards.
        Upstream: Score (scoring.go, v1.35)
        """
        try:
            s = state.read(PRE_SCORE_STATE_KEY)
        except StateNotFoundError:
            return 0, _state_not_found()
        labels = node_info.node.metadata.labels
        total = 0
        for key, values in s.topology_score.items():
            tv = labels.get(key)
            if tv is not None:
                total += values.get(tv, 0)
        return total, SUCCESS

    def score_extensions(self) -> ScoreExtensions | None:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status:
        """Scale linearly so that the lowest raw score is 0 and the highest 100.

        Upstream: NormalizeScore (scoring.go, v1.35)
        """
        try:
            s = state.read(PRE_SCORE_STATE_KEY)
        except StateNotFoundError:
            return _state_not_found()
        if not s.topology_score or not scores:
            return SUCCESS
        min_count = min(ns.score for ns in scores)
        max_count = max(ns.score for ns in scores)
        diff = max_count - min_count
        for ns in scores:
            f_score = 0.0
            if diff > 0:
                f_score = float(MAX_NODE_SCORE) * (float(ns.score - min_count) / float(diff))
            ns.score = int(f_score)  # Go's int64(float64) truncates toward zero
        return SUCCESS


def _state_not_found() -> Status:
    """Upstream: getPreScoreState's error (scoring.go, v1.35)."""
    return as_status(f'failed to read "{PRE_SCORE_STATE_KEY_NAME}" from cycleState: not found')
