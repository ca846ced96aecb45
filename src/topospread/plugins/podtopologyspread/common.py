"""Constraint parsing, node inclusion and counting shared by filtering and scoring."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from topospread.api.types import (
    NODE_INCLUSION_POLICY_HONOR,
    NODE_INCLUSION_POLICY_IGNORE,
    Node,
    Pod,
    TopologySpreadConstraint,
)
from topospread.framework.features import Features
from topospread.framework.interface import Handle
from topospread.labels.selector import (
    Selector,
    label_selector_as_selector,
    selector_from_set,
)
from topospread.nodeaffinity import RequiredNodeAffinity
from topospread.plugins.helper.spread import default_selector
from topospread.taints import do_not_schedule_taints_filter, find_matching_untolerated_taint

NAME: Final = "PodTopologySpread"

# Reasons shown in FailedScheduling events, byte for byte upstream's.
ERR_REASON_CONSTRAINTS_NOT_MATCH: Final = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH: Final = (
    ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
)


@dataclass(frozen=True, slots=True)
class InternalConstraint:
    """A pod's constraint with its selector compiled and its defaults resolved.

    Upstream: topologySpreadConstraint (podtopologyspread/common.go, v1.35)
    """

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int = 1
    node_affinity_policy: str = NODE_INCLUSION_POLICY_HONOR
    node_taints_policy: str = NODE_INCLUSION_POLICY_IGNORE

    def match_node_inclusion_policies(
        self,
        pod: Pod,
        node: Node,
        required: RequiredNodeAffinity,
        *,
        enable_comparison_operators: bool = False,
    ) -> bool:
        """Whether the node's domain counts for this constraint under its inclusion policies.

        Upstream: topologySpreadConstraint.matchNodeInclusionPolicies (common.go, v1.35)
        """
        if self.node_affinity_policy == NODE_INCLUSION_POLICY_HONOR and not required.match(node):
            return False
        return not (
            self.node_taints_policy == NODE_INCLUSION_POLICY_HONOR
            and find_matching_untolerated_taint(
                node.spec.taints,
                pod.spec.tolerations,
                do_not_schedule_taints_filter,
                enable_comparison_operators=enable_comparison_operators,
            )
            is not None
        )


def node_labels_match_spread_constraints(
    node_labels: Mapping[str, str], constraints: Iterable[InternalConstraint]
) -> bool:
    """True when the node carries every constraint's topology key.

    Upstream: nodeLabelsMatchSpreadConstraints (common.go, v1.35)
    """
    return all(c.topology_key in node_labels for c in constraints)


def merge_label_set_with_selector(match_labels: Mapping[str, str], selector: Selector) -> Selector:
    """AND the pod's matchLabelKeys values into the selector; Nothing stays Nothing.

    Upstream: mergeLabelSetWithSelector (common.go, v1.35)
    """
    requirements = selector.requirements
    if requirements is None:
        return selector
    return selector_from_set(match_labels).add(*requirements)


def count_pods_match_selector(pods: Iterable[Pod], selector: Selector, namespace: str) -> int:
    """Matching pods in the namespace, terminating pods excluded (kubernetes#87621).

    An empty selector (``labelSelector: {}``) counts nothing here, although it matches the
    incoming pod itself.
    Upstream: countPodsMatchSelector (common.go, v1.35)
    """
    if selector.empty:
        return 0
    count = 0
    for pod in pods:
        meta = pod.metadata
        if meta.deletion_timestamp is not None or meta.namespace != namespace:
            continue
        if selector.matches(meta.labels):
            count += 1
    return count


def pod_labels_match_spread_constraints(
    constraints: Iterable[InternalConstraint], labels: Mapping[str, str]
) -> bool:
    """Upstream: podLabelsMatchSpreadConstraints (common.go, v1.35)."""
    return any(c.selector.matches(labels) for c in constraints)


_ENCODER: Final = msgspec.json.Encoder()


class PluginBase:
    """State and helpers the PodTopologySpread extension points share.

    Upstream: the PodTopologySpread struct (plugin.go) and its methods in common.go.
    """

    handle: Handle
    features: Features
    _compiled: dict[Any, list[InternalConstraint]]
    default_constraints: Sequence[TopologySpreadConstraint]
    system_defaulted: bool

    @property
    def name(self) -> str:
        return NAME

    def filter_topology_spread_constraints(
        self,
        constraints: Sequence[TopologySpreadConstraint],
        pod_labels: Mapping[str, str],
        action: str,
    ) -> list[InternalConstraint]:
        """The constraints with ``whenUnsatisfiable == action``, compiled.

        Raises SelectorError when a labelSelector does not parse.
        Upstream: filterTopologySpreadConstraints (common.go, v1.35)
        """
        result: list[InternalConstraint] = []
        for c in constraints:
            if c.when_unsatisfiable != action:
                continue
            selector = label_selector_as_selector(c.label_selector)
            if self.features.enable_match_label_keys_in_pod_topology_spread and c.match_label_keys:
                match_labels = {k: pod_labels[k] for k in c.match_label_keys if k in pod_labels}
                if match_labels:
                    selector = merge_label_set_with_selector(match_labels, selector)
            affinity_policy = NODE_INCLUSION_POLICY_HONOR
            taints_policy = NODE_INCLUSION_POLICY_IGNORE
            if self.features.enable_node_inclusion_policy_in_pod_topology_spread:
                if c.node_affinity_policy is not None:
                    affinity_policy = c.node_affinity_policy
                if c.node_taints_policy is not None:
                    taints_policy = c.node_taints_policy
            result.append(
                InternalConstraint(
                    max_skew=c.max_skew,
                    topology_key=c.topology_key,
                    selector=selector,
                    min_domains=c.min_domains if c.min_domains is not None else 1,
                    node_affinity_policy=affinity_policy,
                    node_taints_policy=taints_policy,
                )
            )
        return result

    def build_default_constraints(self, pod: Pod, action: str) -> list[InternalConstraint]:
        """The profile's default constraints for ``action``, selecting the pod's siblings.

        None apply when the pod has no Service or controller to derive a selector from.
        Upstream: buildDefaultConstraints (common.go, v1.35)
        """
        constraints = self.filter_topology_spread_constraints(
            self.default_constraints, pod.metadata.labels, action
        )
        if not constraints:
            return []
        selector = default_selector(pod, self.handle.object_lister())
        if selector.empty:
            return []
        return [
            InternalConstraint(
                max_skew=c.max_skew,
                topology_key=c.topology_key,
                selector=selector,
                min_domains=c.min_domains,
                node_affinity_policy=c.node_affinity_policy,
                node_taints_policy=c.node_taints_policy,
            )
            for c in constraints
        ]

    def get_constraints(self, pod: Pod, action: str) -> list[InternalConstraint]:
        """The pod's own constraints for ``action`` or, when it has none at all, the defaults.

        Upstream: getConstraints (common.go, v1.35)
        """
        own = pod.spec.topology_spread_constraints
        if own:
            # Compiled once per distinct constraints, action and values of their
            # matchLabelKeys (a queueing hint asks again for every waiting pod on every bind).
            labels = pod.metadata.labels
            key = (
                _ENCODER.encode(own),
                tuple(labels.get(k) for c in own for k in c.match_label_keys),
                action,
            )
            memo: dict[Any, list[InternalConstraint]] | None = getattr(self, "_compiled", None)
            if memo is None:
                memo = self._compiled = {}
            found = memo.get(key)
            if found is None:
                found = self.filter_topology_spread_constraints(own, labels, action)
                if len(memo) > 4096:
                    memo.clear()
                memo[key] = found
            return list(found)
        return self.build_default_constraints(pod, action)
