"""PreFilter, its add/remove extensions, and Filter: required affinity and anti-affinity.

Three counts per topology pair (key, value) are taken in PreFilter:

- ``existing_anti_affinity_counts``: required anti-affinity terms of existing pods that match
  the incoming pod, counted at the existing pod's node's value of each term's topology key;
- ``affinity_counts``: for each existing pod that matches *all* the incoming pod's required
  affinity terms, one per term at its node's value of the term's key;
- ``anti_affinity_counts``: existing pods matching each of the incoming pod's required
  anti-affinity terms.

A node missing a term's topology key contributes to no count. Terminating pods count like any
other pod (kubernetes#112098 was closed unmerged: they still hold their place).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from topospread.api.types import Node, Pod
from topospread.framework.cycle_state import CycleState, StateKey, StateNotFoundError
from topospread.framework.interface import PreFilterExtensions, PreFilterResult
from topospread.framework.status import SKIP, SUCCESS, Code, Status, as_status, new_status
from topospread.framework.types import NodeInfo
from topospread.plugins.interpodaffinity.common import NAME, PluginBase, TopologyPair
from topospread.plugins.interpodaffinity.terms import (
    AffinityTerm,
    NamespaceLabels,
    PodAffinityTerms,
    has_pod_affinity,
)

# Reasons shown in FailedScheduling events, byte for byte upstream's.
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH: Final = (
    "node(s) didn't satisfy existing pods anti-affinity rules"
)
ERR_REASON_AFFINITY_RULES_NOT_MATCH: Final = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH: Final = "node(s) didn't match pod anti-affinity rules"

PRE_FILTER_STATE_KEY_NAME: Final = "PreFilter" + NAME

TopologyToMatchedTermCount = dict[TopologyPair, int]


def _update(counts: TopologyToMatchedTermCount, node: Node, key: str, value: int) -> None:
    """Add ``value`` at the node's pair for ``key``, dropping a pair that falls to zero.

    Upstream: topologyToMatchedTermCount.update (filtering.go, v1.35)
    """
    tv = node.metadata.labels.get(key)
    if tv is None:
        return
    pair = (key, tv)
    n = counts.get(pair, 0) + value
    if n == 0:
        counts.pop(pair, None)
    else:
        counts[pair] = n


def pod_matches_all_affinity_terms(
    terms: Sequence[AffinityTerm], pod: Pod, namespace_labels: NamespaceLabels
) -> bool:
    """True only when there are terms and the pod matches every one of them.

    Upstream: podMatchesAllAffinityTerms (filtering.go, v1.35)
    """
    if not terms:
        return False
    return all(t.matches(pod, namespace_labels) for t in terms)


def update_with_affinity_terms(
    counts: TopologyToMatchedTermCount,
    terms: Sequence[AffinityTerm],
    pod: Pod,
    namespace_labels: NamespaceLabels,
    node: Node,
    value: int,
) -> None:
    """Count ``pod`` once per term when it matches all the terms.

    Upstream: topologyToMatchedTermCount.updateWithAffinityTerms (filtering.go, v1.35)
    """
    if pod_matches_all_affinity_terms(terms, pod, namespace_labels):
        for t in terms:
            _update(counts, node, t.topology_key, value)


def update_with_anti_affinity_terms(
    counts: TopologyToMatchedTermCount,
    terms: Iterable[AffinityTerm],
    pod: Pod,
    namespace_labels: NamespaceLabels,
    node: Node,
    value: int,
) -> None:
    """Count ``pod`` for each term it matches.

    Upstream: topologyToMatchedTermCount.updateWithAntiAffinityTerms (filtering.go, v1.35)
    """
    for t in terms:
        if t.matches(pod, namespace_labels):
            _update(counts, node, t.topology_key, value)


@dataclass(slots=True)
class PreFilterState:
    """The counts PreFilter took, read by Filter and kept current by AddPod/RemovePod.

    Upstream: preFilterState (filtering.go, v1.35)
    """

    pod: Pod
    terms: PodAffinityTerms
    namespace_labels: NamespaceLabels
    existing_anti_affinity_counts: TopologyToMatchedTermCount
    affinity_counts: TopologyToMatchedTermCount
    anti_affinity_counts: TopologyToMatchedTermCount

    def clone(self) -> PreFilterState:
        # The incoming pod, its parsed terms and the namespace lookup never change within a
        # cycle and are shared; only the counts, which AddPod/RemovePod change, are copied.
        return PreFilterState(
            pod=self.pod,
            terms=self.terms,
            namespace_labels=self.namespace_labels,
            existing_anti_affinity_counts=dict(self.existing_anti_affinity_counts),
            affinity_counts=dict(self.affinity_counts),
            anti_affinity_counts=dict(self.anti_affinity_counts),
        )

    def update_with_pod(
        self, updated: Pod, updated_terms: PodAffinityTerms, node: Node, multiplier: int
    ) -> None:
        """Count a pod placed on (``+1``) or taken off (``-1``) the node.

        Upstream: preFilterState.updateWithPod (filtering.go, v1.35)
        """
        update_with_anti_affinity_terms(
            self.existing_anti_affinity_counts,
            updated_terms.required_anti_affinity_terms,
            self.pod,
            self.namespace_labels,
            node,
            multiplier,
        )
        update_with_affinity_terms(
            self.affinity_counts,
            self.terms.required_affinity_terms,
            updated,
            self.namespace_labels,
            node,
            multiplier,
        )
        update_with_anti_affinity_terms(
            self.anti_affinity_counts,
            self.terms.required_anti_affinity_terms,
            updated,
            self.namespace_labels,
            node,
            multiplier,
        )


PRE_FILTER_STATE_KEY: Final[StateKey[PreFilterState]] = StateKey(PRE_FILTER_STATE_KEY_NAME)


def satisfy_existing_pods_anti_affinity(state: PreFilterState, node_info: NodeInfo) -> bool:
    """False when any of the node's label pairs holds an existing pod that repels the pod.

    Upstream: satisfyExistingPodsAntiAffinity (filtering.go, v1.35)
    """
    counts = state.existing_anti_affinity_counts
    if not counts:
        return True
    return all(counts.get(pair, 0) <= 0 for pair in node_info.node.metadata.labels.items())


def satisfy_pod_anti_affinity(state: PreFilterState, node_info: NodeInfo) -> bool:
    """False when the node's domain of some anti-affinity term holds a matching pod.

    Upstream: satisfyPodAntiAffinity (filtering.go, v1.35)
    """
    counts = state.anti_affinity_counts
    if not counts:
        return True
    labels = node_info.node.metadata.labels
    for term in state.terms.required_anti_affinity_terms:
        tv = labels.get(term.topology_key)
        if tv is not None and counts.get((term.topology_key, tv), 0) > 0:
            return False
    return True


def satisfy_pod_affinity(state: PreFilterState, node_info: NodeInfo) -> bool:
    """The node must carry every term's topology key and each domain hold a matching pod.

    The first pod of a group whose terms select the pod itself may go anywhere that has the
    keys, as long as no pod in the cluster matches all the terms yet.
    Upstream: satisfyPodAffinity (filtering.go, v1.35)
    """
    terms = state.terms.required_affinity_terms
    labels = node_info.node.metadata.labels
    pods_exist = True
    for term in terms:
        tv = labels.get(term.topology_key)
        if tv is None:
            return False  # every topology key must exist on the node
        if state.affinity_counts.get((term.topology_key, tv), 0) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    return not state.affinity_counts and pod_matches_all_affinity_terms(
        terms, state.pod, state.namespace_labels
    )


_PODS_WITH_AFFINITY_KEY: Final = "interpodaffinity.pods-with-affinity"


def _pods_with_affinity(info: NodeInfo) -> list[Pod]:
    """The node's pods with a podAffinity or podAntiAffinity stanza, kept in the NodeInfo's
    cache until its pods change (only they can carry required anti-affinity terms; most
    clusters have few).

    Upstream: NodeInfo.PodsWithAffinity (framework/types.go, v1.35)
    """
    found: list[Pod] | None = info.cache.get(_PODS_WITH_AFFINITY_KEY)
    if found is None:
        found = info.cache[_PODS_WITH_AFFINITY_KEY] = [p for p in info.pods if has_pod_affinity(p)]
    return found


class Filtering(PluginBase):
    """PreFilter, PreFilterExtensions and Filter of InterPodAffinity."""

    def existing_anti_affinity_counts(
        self, pod: Pod, namespace_labels: NamespaceLabels, nodes: Iterable[NodeInfo]
    ) -> TopologyToMatchedTermCount:
        """Count existing pods' required anti-affinity terms that match the incoming pod.

        Upstream: getExistingAntiAffinityCounts (filtering.go, v1.35)
        """
        counts: TopologyToMatchedTermCount = {}
        for info in nodes:
            node = info.node
            for existing in _pods_with_affinity(info):
                terms = self.terms_cache.get(existing).required_anti_affinity_terms
                if terms:
                    update_with_anti_affinity_terms(counts, terms, pod, namespace_labels, node, 1)
        return counts

    def incoming_affinity_anti_affinity_counts(
        self,
        terms: PodAffinityTerms,
        namespace_labels: NamespaceLabels,
        nodes: Iterable[NodeInfo],
    ) -> tuple[TopologyToMatchedTermCount, TopologyToMatchedTermCount]:
        """Count existing pods that match the incoming pod's required (anti-)affinity terms.

        Upstream: getIncomingAffinityAntiAffinityCounts (filtering.go, v1.35)
        """
        affinity: TopologyToMatchedTermCount = {}
        anti_affinity: TopologyToMatchedTermCount = {}
        affinity_terms = terms.required_affinity_terms
        anti_terms = terms.required_anti_affinity_terms
        if not affinity_terms and not anti_terms:
            return affinity, anti_affinity
        for info in nodes:
            node = info.node
            for existing in info.pods:
                update_with_affinity_terms(
                    affinity, affinity_terms, existing, namespace_labels, node, 1
                )
                update_with_anti_affinity_terms(
                    anti_affinity, anti_terms, existing, namespace_labels, node, 1
                )
        return affinity, anti_affinity

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        """Take the three counts; Skip when no term of either side can apply.

        Upstream: PreFilter (filtering.go, v1.35)
        """
        terms = self.terms_cache.get(pod)
        if terms.parse_error:
            return None, new_status(
                Code.UnschedulableAndUnresolvable, f"parsing pod: {terms.parse_error}"
            )
        namespace_labels = self.namespace_labels()
        lister = self.handle.snapshot_shared_lister().node_infos()
        # Only nodes holding pods with affinity can hold required anti-affinity terms; a
        # lister that keeps them apart (the cluster state) saves a walk over every node.
        with_affinity = getattr(lister, "have_pods_with_affinity_list", None)
        holders = lister.list() if with_affinity is None else with_affinity()
        existing = self.existing_anti_affinity_counts(pod, namespace_labels, holders)
        affinity, anti_affinity = self.incoming_affinity_anti_affinity_counts(
            terms, namespace_labels, nodes
        )
        if (
            not existing
            and not terms.required_affinity_terms
            and not terms.required_anti_affinity_terms
        ):
            return None, SKIP
        state.write(
            PRE_FILTER_STATE_KEY,
            PreFilterState(
                pod=pod,
                terms=terms,
                namespace_labels=namespace_labels,
                existing_anti_affinity_counts=existing,
                affinity_counts=affinity,
                anti_affinity_counts=anti_affinity,
            ),
        )
        return None, SUCCESS

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return self

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status:
        """Upstream: AddPod (filtering.go, v1.35)."""
        return self._update_with_pod(state, pod_to_add, node_info, 1)

    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status:
        """Upstream: RemovePod (filtering.go, v1.35)."""
        return self._update_with_pod(state, pod_to_remove, node_info, -1)

    def _update_with_pod(
        self, state: CycleState, updated: Pod, node_info: NodeInfo, multiplier: int
    ) -> Status:
        try:
            s = state.read(PRE_FILTER_STATE_KEY)
        except StateNotFoundError:
            return _state_not_found()
        s.update_with_pod(updated, self.terms_cache.get(updated), node_info.node, multiplier)
        return SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Check the pod's affinity, its anti-affinity, then existing pods' anti-affinity.

        Upstream: Filter (filtering.go, v1.35)
        """
        try:
            s = state.read(PRE_FILTER_STATE_KEY)
        except StateNotFoundError:
            return _state_not_found()
        if not satisfy_pod_affinity(s, node_info):
            return new_status(
                Code.UnschedulableAndUnresolvable, ERR_REASON_AFFINITY_RULES_NOT_MATCH
            )
        if not satisfy_pod_anti_affinity(s, node_info):
            return new_status(Code.Unschedulable, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
        if not satisfy_existing_pods_anti_affinity(s, node_info):
            return new_status(Code.Unschedulable, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
        return SUCCESS


def _state_not_found() -> Status:
    """Upstream: getPreFilterState's error (filtering.go, v1.35)."""
    return as_status(f'error reading "{PRE_FILTER_STATE_KEY_NAME}" from cycleState: not found')
