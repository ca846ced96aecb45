"""NodeAffinity: nodeSelector and required node affinity filter, preferred terms score.

Upstream: pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go (v1.35)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from topospread.api.types import NodeSelector, Pod
from topospread.errors import ConfigError
from topospread.framework.cycle_state import CycleState, StateKey, StateNotFoundError
from topospread.framework.features import Features
from topospread.framework.interface import (
    Handle,
    PreFilterExtensions,
    PreFilterResult,
    ScoreExtensions,
)
from topospread.framework.status import SKIP, SUCCESS, Code, Status, as_status, new_status
from topospread.framework.types import MAX_NODE_SCORE, NodeInfo, NodeScore
from topospread.nodeaffinity import (
    LazyErrorNodeSelector,
    RequiredNodeAffinity,
    get_required_node_affinity,
)
from topospread.plugins.helper.normalize_score import default_normalize_score
from topospread.plugins.nodeaffinity.args import (
    NodeAffinityArgs,
    decode_node_affinity_args,
    set_defaults_node_affinity_args,
    validate_node_affinity_args,
)
from topospread.plugins.nodeaffinity.selectors import (
    NodeSelectorParseError,
    PreferredSchedulingTerms,
    aggregate_message,
    new_node_selector,
    new_preferred_scheduling_terms,
)

NAME: Final = "NodeAffinity"

ERR_REASON_POD: Final = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED: Final = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT: Final = "pod affinity terms conflict"

# metav1.ObjectNameField: the only field matchFields can select on.
OBJECT_NAME_FIELD: Final = "metadata.name"


@dataclass(frozen=True, slots=True)
class PreFilterState:
    """The pod's nodeSelector and required affinity, parsed once per cycle.

    Upstream: preFilterState (node_affinity.go, v1.35)
    """

    required_node_selector_and_affinity: RequiredNodeAffinity

    def clone(self) -> PreFilterState:
        # Not affected by adding or removing pods.
        return self


@dataclass(frozen=True, slots=True)
class PreScoreState:
    """The pod's preferred terms, parsed once per cycle (Upstream: preScoreState, v1.35)."""

    preferred_node_affinity: PreferredSchedulingTerms | None

    def clone(self) -> PreScoreState:
        return self


PRE_FILTER_STATE_KEY: Final[StateKey[PreFilterState]] = StateKey("PreFilter" + NAME)
PRE_SCORE_STATE_KEY: Final[StateKey[PreScoreState]] = StateKey("PreScore" + NAME)


def _required_node_selector(pod: Pod) -> NodeSelector | None:
    affinity = pod.spec.affinity
    if affinity is None or affinity.node_affinity is None:
        return None
    return affinity.node_affinity.required_during_scheduling_ignored_during_execution


def get_pod_preferred_node_affinity(pod: Pod) -> PreferredSchedulingTerms | None:
    """The pod's parsed preferred terms, None when it has none; raises NodeSelectorParseError.

    Upstream: getPodPreferredNodeAffinity (node_affinity.go, v1.35)
    """
    affinity = pod.spec.affinity
    if affinity is None or affinity.node_affinity is None:
        return None
    terms = affinity.node_affinity.preferred_during_scheduling_ignored_during_execution
    # Go tells a nil list from an empty one; decoded manifests here cannot, and an empty list
    # scores every node 0 either way.
    if not terms:
        return None
    return new_preferred_scheduling_terms(terms)


def node_names_from_match_fields(selector: NodeSelector) -> frozenset[str] | None:
    """The nodes the required terms can only match by ``metadata.name In``, or None for all.

    Requirements within a term are ANDed (intersection), terms are ORed (union); one term
    without a ``metadata.name In`` requirement lets every node through.
    Upstream: the node-name branch of NodeAffinity.PreFilter (node_affinity.go, v1.35)
    """
    node_names: set[str] | None = None
    for term in selector.node_selector_terms:
        term_names: set[str] | None = None
        for r in term.match_fields:
            if r.key == OBJECT_NAME_FIELD and r.operator == "In":
                values = set(r.values)
                term_names = values if term_names is None else term_names & values
        if term_names is None:
            return None
        node_names = term_names if node_names is None else node_names | term_names
    return None if node_names is None else frozenset(node_names)


class NodeAffinity:
    """Checks a pod's nodeSelector and node affinity (and the profile's added affinity)."""

    def __init__(self, args: NodeAffinityArgs, handle: Handle | None, features: Features) -> None:
        """``args`` must be valid (see ``validate_node_affinity_args``).

        Upstream: New (node_affinity.go, v1.35)
        """
        self.handle = handle
        self.added_node_selector: LazyErrorNodeSelector | None = None
        self.added_pref_sched_terms: PreferredSchedulingTerms | None = None
        added = args.added_affinity
        if added is not None:
            required = added.required_during_scheduling_ignored_during_execution
            if required is not None:
                self.added_node_selector = new_node_selector(required)
            preferred = added.preferred_during_scheduling_ignored_during_execution
            if preferred:
                self.added_pref_sched_terms = new_preferred_scheduling_terms(preferred)

    @property
    def name(self) -> str:
        return NAME

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        """Parse the pod's required affinity; narrow the nodes when it names them.

        Skips when there is nothing to check: no required affinity, no added affinity and no
        nodeSelector. Terms that all pin ``metadata.name`` give a PreFilterResult; when those
        pins leave no node at all, the pod is UnschedulableAndUnresolvable.
        Upstream: NodeAffinity.PreFilter (node_affinity.go, v1.35)
        """
        required = _required_node_selector(pod)
        if required is None and self.added_node_selector is None and not pod.spec.node_selector:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(get_required_node_affinity(pod)))
        if required is None or not required.node_selector_terms:
            return None, SUCCESS
        node_names = node_names_from_match_fields(required)
        if node_names is None:
            return None, SUCCESS
        if not node_names:
            return None, new_status(Code.UnschedulableAndUnresolvable, ERR_REASON_CONFLICT)
        return PreFilterResult(node_names), SUCCESS

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """The added affinity first, then the pod's nodeSelector and required affinity.

        Upstream: NodeAffinity.Filter (node_affinity.go, v1.35)
        """
        node = node_info.node
        if self.added_node_selector is not None and not self.added_node_selector.match(node):
            return new_status(Code.UnschedulableAndUnresolvable, ERR_REASON_ENFORCED)
        try:
            required = state.read(PRE_FILTER_STATE_KEY).required_node_selector_and_affinity
        except StateNotFoundError:
            # PreFilter did not run (or skipped): parse here.
            required = get_required_node_affinity(pod)
        if not required.match(node):
            return new_status(Code.UnschedulableAndUnresolvable, ERR_REASON_POD)
        return SUCCESS

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        """Upstream: NodeAffinity.PreScore (node_affinity.go, v1.35)."""
        try:
            preferred = get_pod_preferred_node_affinity(pod)
        except NodeSelectorParseError as err:
            return as_status(err)
        if preferred is None and self.added_pref_sched_terms is None:
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(preferred))
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        """The summed weights of the added and the pod's preferred terms the node matches.

        Upstream: NodeAffinity.Score (node_affinity.go, v1.35)
        """
        node = node_info.node
        count = 0
        if self.added_pref_sched_terms is not None:
            count += self.added_pref_sched_terms.score(node)
        try:
            preferred = state.read(PRE_SCORE_STATE_KEY).preferred_node_affinity
        except StateNotFoundError:
            try:
                preferred = get_pod_preferred_node_affinity(pod)
            except NodeSelectorParseError as err:
                return 0, as_status(err)
        if preferred is not None:
            count += preferred.score(node)
        return count, SUCCESS

    def score_extensions(self) -> ScoreExtensions | None:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status:
        """Upstream: NodeAffinity.NormalizeScore (node_affinity.go, v1.35)."""
        return default_normalize_score(MAX_NODE_SCORE, False, scores)


def new(args: Any | None, handle: Handle, features: Features) -> NodeAffinity:
    """Decode, default and validate the args, then build the plugin.

    Raises ConfigError with the scheduler's message when the added affinity does not parse.
    Upstream: New and getArgs (node_affinity.go, v1.35)
    """
    parsed = set_defaults_node_affinity_args(decode_node_affinity_args(args))
    errors = validate_node_affinity_args(parsed)
    if errors:
        raise ConfigError(aggregate_message(errors))
    return NodeAffinity(parsed, handle, features)
