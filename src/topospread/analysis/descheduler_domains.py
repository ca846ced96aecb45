"""The constraints the descheduler's RemovePodsViolatingTopologySpreadConstraint collects and
the domains it counts for each, as it lists them: part of the model in ``descheduler.py``
(which says what is modelled), reading the constraints' pods from the cluster index.

Upstream: pkg/framework/plugins/removepodsviolatingtopologyspreadconstraint/
topologyspreadconstraint.go (descheduler v0.34).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import msgspec

from topospread.analysis.descheduler_node import NodeView, is_running
from topospread.api.types import (
    DO_NOT_SCHEDULE,
    NODE_INCLUSION_POLICY_HONOR,
    NODE_INCLUSION_POLICY_IGNORE,
    Node,
    Pod,
    Toleration,
    TopologySpreadConstraint,
)
from topospread.cluster.index import ClusterIndex, selected_pods
from topospread.framework.types import NodeInfo
from topospread.labels.selector import Selector, SelectorError, label_selector_as_selector
from topospread.nodeaffinity import RequiredNodeAffinity, get_required_node_affinity
from topospread.plugins.podtopologyspread.common import (
    InternalConstraint,
    merge_label_set_with_selector,
)

# ---------------------------------------------------------------------------------------------
# Constraints


def _node_affinity_key(pod: Pod) -> bytes:
    """A value equal for two pods exactly when their required node affinity is the same."""
    affinity = pod.spec.affinity
    required = None
    if affinity is not None and affinity.node_affinity is not None:
        required = affinity.node_affinity.required_during_scheduling_ignored_during_execution
    return msgspec.json.encode((sorted(pod.spec.node_selector.items()), required))


@dataclass(frozen=True, slots=True)
class Constraint:
    """A pod's constraint as the plugin keeps it: selector compiled (matchLabelKeys merged),
    policies defaulted, and the pod's required node affinity and tolerations attached only when
    the matching policy is Honor. Equality is the plugin's duplicate test.

    Upstream: topologySpreadConstraint (topologyspreadconstraint.go, v0.34)
    """

    internal: InternalConstraint
    affinity_key: bytes
    tolerations: tuple[Toleration, ...]
    pod: Pod = field(compare=False)
    required: RequiredNodeAffinity = field(compare=False)
    when_unsatisfiable: str = field(compare=False, default=DO_NOT_SCHEDULE)

    @property
    def max_skew(self) -> int:
        return self.internal.max_skew

    @property
    def topology_key(self) -> str:
        return self.internal.topology_key

    def label(self) -> str:
        selector = self.internal.selector
        shown = str(selector) if not selector.empty else "<every pod>"
        return f"{self.pod.metadata.namespace}/{shown} {self.topology_key}"

    def match_node_inclusion_policies(self, node: Node) -> bool:
        """Upstream: matchNodeInclusionPolicies (topologyspreadconstraint.go, v0.34)."""
        return self.internal.match_node_inclusion_policies(self.pod, node, self.required)


def new_topology_spread_constraint(c: TopologySpreadConstraint, pod: Pod) -> Constraint:
    """Compile one of the pod's constraints; raises SelectorError on a bad labelSelector.

    Upstream: newTopologySpreadConstraint (topologyspreadconstraint.go, v0.34)
    """
    selector = label_selector_as_selector(c.label_selector)
    labels = pod.metadata.labels
    if c.match_label_keys and labels:
        match_labels = {k: labels[k] for k in c.match_label_keys if k in labels}
        if match_labels:
            selector = merge_label_set_with_selector(match_labels, selector)
    affinity_policy = c.node_affinity_policy
    if affinity_policy is None:
        affinity_policy = NODE_INCLUSION_POLICY_HONOR
    taints_policy = c.node_taints_policy
    if taints_policy is None:
        taints_policy = NODE_INCLUSION_POLICY_IGNORE
    honor_affinity = affinity_policy == NODE_INCLUSION_POLICY_HONOR
    honor_taints = taints_policy == NODE_INCLUSION_POLICY_HONOR
    return Constraint(
        internal=InternalConstraint(
            max_skew=c.max_skew,
            topology_key=c.topology_key,
            selector=selector,
            node_affinity_policy=affinity_policy,
            node_taints_policy=taints_policy,
        ),
        affinity_key=_node_affinity_key(pod) if honor_affinity else b"",
        tolerations=tuple(pod.spec.tolerations) if honor_taints else (),
        pod=pod,
        required=get_required_node_affinity(pod),
        when_unsatisfiable=c.when_unsatisfiable,
    )


# ---------------------------------------------------------------------------------------------
# Listing


@dataclass(slots=True)
class Placed:
    """A listed pod and the node it is on."""

    pod: Pod
    node: str
    order: tuple[int, int]  # listing order (node, then place on it): ties keep it


@dataclass(slots=True)
class Domain:
    """A domain (a value of the constraint's topology key) and its listed pods."""

    value: str
    pods: list[Placed]


class Listing:
    """What the plugin lists, read from the cluster index where there is one.

    The plugin lists the pods on the cycle's nodes that pass its pod filter and have not
    finished, namespace by namespace; a constraint's domains hold those its selector matches.
    Instead of a walk over every pod per constraint, the pods a selector matches come per node
    from ``ClusterIndex.pods_of`` (kept current from the cluster's changes), and the pod
    filter (``pod_filter``: the namespaces, labelSelector and evictor's Filter) is asked once per
    pod in the cycle. For a plain list of nodes (no cluster state) the same per-node lists are
    taken from the nodes themselves (``selected_pods``).
    """

    def __init__(
        self,
        infos: Sequence[NodeInfo],
        views: Sequence[NodeView],
        index: ClusterIndex | None,
        pod_filter: Callable[[Pod], bool],
    ) -> None:
        self.views = views
        self._pod_filter = pod_filter
        self._infos = {info.name: info for info in infos}
        self._index = index
        # Each view's row: its place in the index, or in ``infos`` without one.
        positions = index.index if index is not None else {n: i for i, n in enumerate(self._infos)}
        self._rows = [positions[v.name] for v in views]
        self._own: dict[tuple[str, Selector], list[list[Pod]]] = {}
        self._listed: dict[int, bool] = {}
        self._compiled: dict[tuple[str, bytes], Constraint | None] = {}
        self._eligible: dict[tuple[object, ...], list[str]] = {}

    def listed(self, pod: Pod) -> bool:
        """The plugin lists the pod: it has not finished and passes the pod filter."""
        key = id(pod)  # NOTE: the pods outlive the cycle, so an id is not reused meanwhile.
        hit = self._listed.get(key)
        if hit is None:
            hit = self._listed[key] = is_running(pod) and self._pod_filter(pod)
        return hit

    def constraints(self, allowed: frozenset[str]) -> dict[str, list[Constraint]]:
        """Per namespace, the distinct constraints its listed pods declare, in first-seen
        order (pods in node order, then each node's order).

        Upstream: Balance's collection of namespaceTopologySpreadConstraints with
        hasIdenticalConstraints (topologyspreadconstraint.go, v0.34)
        """
        out: dict[str, list[Constraint]] = {}
        for view in self.views:
            for pod in self._infos[view.name].pods:
                specs = pod.spec.topology_spread_constraints
                if not specs or not self.listed(pod):
                    continue
                namespace = pod.metadata.namespace
                for c in specs:
                    if c.when_unsatisfiable not in allowed:
                        continue
                    tsc = self._compile(c, pod)
                    if tsc is None:
                        continue
                    found = out.setdefault(namespace, [])
                    if tsc not in found:
                        found.append(tsc)
        return out

    def _compile(self, c: TopologySpreadConstraint, pod: Pod) -> Constraint | None:
        # NOTE: the key holds everything newTopologySpreadConstraint reads of the pod, so
        # pods alike share one compiled constraint (equal to what each would compile to).
        spec = pod.spec
        affinity = spec.affinity
        required = None
        if affinity is not None and affinity.node_affinity is not None:
            required = affinity.node_affinity.required_during_scheduling_ignored_during_execution
        labels = pod.metadata.labels
        key = (
            pod.metadata.namespace,
            msgspec.json.encode(
                (c, [labels.get(k) for k in c.match_label_keys], spec.node_selector, required,
                 spec.tolerations)
            ),
        )  # fmt: skip
        if key in self._compiled:
            return self._compiled[key]
        try:
            tsc: Constraint | None = new_topology_spread_constraint(c, pod)
        except SelectorError:
            # Upstream logs "cannot process topology spread constraint" and goes on.
            tsc = None
        self._compiled[key] = tsc
        return tsc

    def _pods_of(self, namespace: str, selector: Selector) -> list[list[Pod]]:
        if self._index is not None:
            return self._index.pods_of(namespace, selector)
        rows = self._own.get((namespace, selector))
        if rows is None:
            rows = self._own[namespace, selector] = [
                selected_pods(info.pods, namespace, selector) for info in self._infos.values()
            ]
        return rows

    def _eligible_values(self, tsc: Constraint) -> list[str]:
        """The domains the constraint starts with: the key's values on the nodes passing its
        inclusion policies, in node order."""
        internal = tsc.internal
        key = (tsc.topology_key, internal.node_affinity_policy, internal.node_taints_policy,
               tsc.affinity_key, tsc.tolerations)  # fmt: skip
        values = self._eligible.get(key)
        if values is None:
            values = []
            for view in self.views:
                value = view.node.metadata.labels.get(tsc.topology_key)
                if value is not None and tsc.match_node_inclusion_policies(view.node):
                    values.append(value)
            self._eligible[key] = values
        return values

    def domains(self, tsc: Constraint) -> tuple[list[Domain], int]:
        """The constraint's domains with the listed pods it selects, and how many it selects.

        Upstream: Balance's constraintTopologies and sumPods (topologyspreadconstraint.go,
        v0.34)
        """
        key = tsc.topology_key
        domains: dict[str, Domain] = {}
        for eligible in self._eligible_values(tsc):
            domains.setdefault(eligible, Domain(eligible, []))
        rows = self._pods_of(tsc.pod.metadata.namespace, tsc.internal.selector)
        total = 0
        for at, (view, row) in enumerate(zip(self.views, self._rows, strict=True)):
            pods = rows[row]
            if not pods:
                continue
            value = view.node.metadata.labels.get(key)
            if value is None:
                continue
            for place, pod in enumerate(pods):
                if not self.listed(pod):
                    continue
                # A pod on a node the inclusion policies left out still creates its domain.
                placed = Placed(pod, view.name, (at, place))
                domains.setdefault(value, Domain(value, [])).pods.append(placed)
                total += 1
        return list(domains.values()), total


__all__ = ["Constraint", "Domain", "Listing", "Placed", "new_topology_spread_constraint"]
