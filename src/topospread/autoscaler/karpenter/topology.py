"""Karpenter's topology model: spread, pod affinity and anti-affinity as topology groups.

Karpenter does not run kube-scheduler's filters while packing pods onto nodeclaims that do not
exist yet. It keeps, per distinct constraint, a topology group: the constraint's key, selector
and namespaces, and a count of matching pods per domain. The domains are every value the key can
take: the existing nodes' labels *and* every value the NodePools' requirements and their
instance types allow. A zone in a NodePool with no node yet is therefore a domain with count
0, which is what lets Karpenter spread from zero nodes (the spread docs' remedy for the
scale-from-zero limitation); by the same rule a lost zone stays a domain while its nodes
exist or its NodePool's instance types are offered there, available or not (a zone whose
offerings are all in the unavailable-offerings cache included). Adding a pod to a node narrows
the node's requirement on the key to the domains the group allows (for spread, the one with
the fewest matching pods).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum

from topospread.api.types import LABEL_HOSTNAME, Node, Pod, PodAffinityTerm, Taint, Toleration
from topospread.autoscaler.karpenter.requirements import (
    Requirement,
    Requirements,
    from_labels,
    from_node_selector_requirements,
    strict_pod_requirements,
)
from topospread.labels.selector import Selector, label_selector_as_selector
from topospread.taints import find_matching_untolerated_taint

_ALL_NAMESPACES: frozenset[str] = frozenset({"*"})


class TopologyType(Enum):
    """Upstream: TopologyType (topologygroup.go), its String() as the value."""

    SPREAD = "topology spread"
    POD_AFFINITY = "pod affinity"
    POD_ANTI_AFFINITY = "pod anti-affinity"


@dataclass(frozen=True, slots=True)
class DomainSource:
    """Where domains can come from: the values a NodePool's new nodes may take per label key,
    and the NodePool's taints (which keep its domains from a spread that honours taints the
    pod does not tolerate). Upstream: TopologyDomainGroup (topologydomaingroup.go)"""

    domains: Mapping[str, frozenset[str]]
    taints: tuple[Taint, ...]


@dataclass(slots=True)
class TopologyGroup:
    """One constraint shared by every pod that carries it, with per-domain counts.

    Upstream: TopologyGroup (topologygroup.go)
    """

    type: TopologyType
    key: str
    namespaces: frozenset[str]
    selector: Selector
    max_skew: int = 0
    min_domains: int | None = None
    # The owner's node selector with each of its required node-affinity terms, ORed
    # (nodeAffinityPolicy Honor); None counts every node.
    node_filter: tuple[Requirements, ...] | None = None
    tolerations: tuple[Toleration, ...] | None = None  # the owner's (nodeTaintsPolicy Honor)
    domains: dict[str, int] = field(default_factory=dict)
    empty_domains: set[str] = field(default_factory=set)
    owners: set[str] = field(default_factory=set)

    def selects(self, pod: Pod) -> bool:
        ns = pod.metadata.namespace or "default"
        in_ns = self.namespaces is _ALL_NAMESPACES or ns in self.namespaces
        return in_ns and self.selector.matches(pod.metadata.labels)

    def counts(self, pod: Pod, node_reqs: Requirements) -> bool:
        """Whether ``pod`` on a node with ``node_reqs`` counts towards the group: it matches the
        selector and, for spread, the node passes the owner's node affinity.
        Upstream: TopologyGroup.Counts"""
        if not self.selects(pod):
            return False
        return _matches(self.node_filter, node_reqs, allow_undefined_well_known=True)

    def register(self, *domains: str) -> None:
        for d in domains:
            if d not in self.domains:
                self.domains[d] = 0
                self.empty_domains.add(d)

    def record(self, *domains: str) -> None:
        for d in domains:
            self.domains[d] = self.domains.get(d, 0) + 1
            self.empty_domains.discard(d)

    def get(self, pod: Pod, pod_domains: Requirement, node_domains: Requirement) -> Requirement:
        """The domains a node may take on the key for ``pod``. Upstream: TopologyGroup.Get"""
        if self.type is TopologyType.SPREAD:
            return self._next_domain_spread(pod, pod_domains, node_domains)
        if self.type is TopologyType.POD_AFFINITY:
            return self._next_domain_affinity(pod, pod_domains, node_domains)
        return self._next_domain_anti_affinity(pod_domains, node_domains)

    def _single_host(self, node_domains: Requirement) -> str | None:
        if self.key == LABEL_HOSTNAME and not node_domains.complement and len(node_domains) == 1:
            return node_domains.any()
        return None

    def domain_min_count(self, pod_domains: Requirement) -> int:
        """Upstream: domainMinCount (hostname's minimum is 0: a new node is always possible)"""
        if self.key == LABEL_HOSTNAME:
            return 0
        counts = [c for d, c in self.domains.items() if pod_domains.has(d)]
        if self.min_domains is not None and len(counts) < self.min_domains:
            return 0
        return min(counts, default=1 << 31)

    def _next_domain_spread(
        self, pod: Pod, pod_domains: Requirement, node_domains: Requirement
    ) -> Requirement:
        """The domain with the fewest matching pods among those the node allows whose count
        (plus the pod, if it matches itself) stays within maxSkew of the minimum.
        Upstream: nextDomainTopologySpread"""
        self_selecting = 1 if self.selects(pod) else 0
        host = self._single_host(node_domains)
        if host is not None:
            if self.domains.get(host, 0) + self_selecting <= self.max_skew:
                return Requirement.new(self.key, "In", [host])
            return Requirement.new(self.key, "DoesNotExist")
        low = self.domain_min_count(pod_domains)
        best: tuple[int, str] | None = None
        # Sorted, so that ties go to the first domain by name (Go's map order is random).
        for domain in sorted(self.domains):
            if not node_domains.has(domain):
                continue
            count = self.domains[domain] + self_selecting
            if count - low <= self.max_skew and (best is None or count < best[0]):
                best = (count, domain)
        if best is None:
            return Requirement.new(self.key, "DoesNotExist")
        return Requirement.new(self.key, "In", [best[1]])

    def _any_compatible_pod_domain(self, pod_domains: Requirement) -> bool:
        return any(pod_domains.has(d) and c > 0 for d, c in self.domains.items())

    def _next_domain_affinity(
        self, pod: Pod, pod_domains: Requirement, node_domains: Requirement
    ) -> Requirement:
        """Domains that already hold a matching pod; a pod matching its own affinity may
        bootstrap a domain when no matching pod exists yet. Upstream: nextDomainAffinity"""
        bootstrap = self.selects(pod) and (
            len(self.domains) == len(self.empty_domains)
            or not self._any_compatible_pod_domain(pod_domains)
        )
        host = self._single_host(node_domains)
        if host is not None:
            if pod_domains.has(host) and (self.domains.get(host, 0) > 0 or bootstrap):
                return Requirement.new(self.key, "In", [host])
            return Requirement.new(self.key, "DoesNotExist")
        options = {
            d
            for d, c in self.domains.items()
            if c > 0 and pod_domains.has(d) and node_domains.has(d)
        }
        if not options and bootstrap:
            both = [d for d in sorted(self.domains) if pod_domains.has(d) and node_domains.has(d)]
            anywhere = [d for d in sorted(self.domains) if pod_domains.has(d)]
            options = set((both or anywhere)[:1])
        if not options:
            return Requirement.new(self.key, "DoesNotExist")
        return Requirement.new(self.key, "In", options)

    def _next_domain_anti_affinity(
        self, pod_domains: Requirement, node_domains: Requirement
    ) -> Requirement:
        """Only domains without a matching pod. Upstream: nextDomainAntiAffinity"""
        host = self._single_host(node_domains)
        if host is not None:
            if self.domains.get(host, 0) == 0:
                return Requirement.new(self.key, "In", [host])
            return Requirement.new(self.key, "DoesNotExist")
        options = {d for d in self.empty_domains if node_domains.has(d) and pod_domains.has(d)}
        if not options:
            return Requirement.new(self.key, "DoesNotExist")
        return Requirement.new(self.key, "In", options)

    def counts_text(self) -> str:
        """The counts by domain, at most 25. Upstream: pretty.Map(domains, 25)"""
        items = sorted(self.domains.items())
        text = ", ".join(f"{d}: {c}" for d, c in items[:25])
        if len(items) > 25:
            text += f" and {len(items) - 25} other(s)"
        return text


def _term_namespaces(pod: Pod, term: PodAffinityTerm) -> frozenset[str]:
    if term.namespace_selector is not None and not (
        term.namespace_selector.match_labels or term.namespace_selector.match_expressions
    ):
        return _ALL_NAMESPACES
    return frozenset(term.namespaces or [pod.metadata.namespace or "default"])


def _group_id(g: TopologyGroup) -> tuple[object, ...]:
    return (
        g.type,
        g.key,
        tuple(sorted(g.namespaces)),
        str(g.selector),
        g.max_skew,
        g.min_domains,
        None if g.node_filter is None else tuple(_requirements_id(r) for r in g.node_filter),
        g.tolerations,
    )


class Topology:
    """Every topology group of a provisioning run, their domains and counts.

    Upstream: Topology (topology.go)
    """

    def __init__(
        self,
        sources: Sequence[DomainSource],
        nodes: Iterable[tuple[Node, Sequence[Pod]]],
    ) -> None:
        self.sources = list(sources)
        self.nodes = [(n, list(pods)) for n, pods in nodes]
        self.groups: dict[tuple[object, ...], TopologyGroup] = {}
        self.inverse: dict[tuple[object, ...], TopologyGroup] = {}
        self.extra_domains: dict[str, set[str]] = {}
        for node, pods in self.nodes:
            for pod in pods:
                if _anti_affinity_terms(pod):
                    self._add_inverse_anti_affinity(pod, node.metadata.labels)

    def register(self, key: str, domain: str) -> None:
        """A new domain (a new nodeclaim's hostname) joins every group on its key.
        Upstream: Topology.Register"""
        self.extra_domains.setdefault(key, set()).add(domain)
        for g in (*self.groups.values(), *self.inverse.values()):
            if g.key == key:
                g.register(domain)

    def _domains_for(
        self,
        key: str,
        node_filter: tuple[Requirements, ...] | None,
        tolerations: Sequence[Toleration] | None,
    ) -> set[str]:
        """Every domain of ``key``: the NodePools' (only their taints filter them, as
        upstream's domain groups are not filtered by the pod's node affinity) and the
        existing nodes' that pass the group's node filter (nodeAffinityPolicy and
        nodeTaintsPolicy Honor). A node's domain counts while the node exists, Ready or not.
        Upstream: TopologyDomainGroup.ForEachDomain and Topology.countDomains"""
        out = set(self.extra_domains.get(key, ()))
        for src in self.sources:
            values = src.domains.get(key)
            if not values or _untolerated(src.taints, tolerations):
                continue
            out.update(values)
        for node, _ in self.nodes:
            value = node.metadata.labels.get(key)
            if value is None or _untolerated(node.spec.taints, tolerations):
                continue
            if node_filter is not None and not _matches(
                node_filter, from_labels(node.metadata.labels), allow_undefined_well_known=False
            ):
                continue
            out.add(value)
        return out

    def _count_domains(self, g: TopologyGroup) -> None:
        """Upstream: Topology.countDomains"""
        for node, pods in self.nodes:
            value = node.metadata.labels.get(g.key)
            if value is None and g.key == LABEL_HOSTNAME:
                # A node not labelled yet: its name stands for its hostname.
                value = node.metadata.name
            if value is None or _untolerated(node.spec.taints, g.tolerations):
                continue
            node_reqs = Requirements(
                Requirement.new(k, "In", [v]) for k, v in node.metadata.labels.items()
            )
            if not _matches(g.node_filter, node_reqs, allow_undefined_well_known=False):
                continue
            for pod in pods:
                if not _ignored_for_topology(pod) and g.selects(pod):
                    g.record(value)

    def _add_group(
        self, into: dict[tuple[object, ...], TopologyGroup], g: TopologyGroup, pod: Pod
    ) -> TopologyGroup:
        gid = _group_id(g)
        existing = into.get(gid)
        if existing is not None:
            return existing
        g.register(*self._domains_for(g.key, g.node_filter, g.tolerations))
        self._count_domains(g)
        into[gid] = g
        return g

    def update(self, pod: Pod) -> None:
        """Create (or join) the groups of the pod's own constraints. Upstream: Topology.Update"""
        uid = _uid(pod)
        # A relaxed pod leaves the groups of the constraints it no longer has.
        for g in self.groups.values():
            g.owners.discard(uid)
        node_filter = _node_filter(pod)
        # ScheduleAnyway constraints count as DoNotSchedule until relaxed away (preferences.py).
        for c in pod.spec.topology_spread_constraints:
            honor = (c.node_affinity_policy or "Honor") == "Honor"
            honor_taints = c.node_taints_policy == "Honor"
            g = TopologyGroup(
                TopologyType.SPREAD,
                c.topology_key,
                frozenset({pod.metadata.namespace or "default"}),
                label_selector_as_selector(c.label_selector),
                c.max_skew,
                c.min_domains,
                node_filter if honor else None,
                tuple(pod.spec.tolerations) if honor_taints else None,
            )
            self._add_group(self.groups, g, pod).owners.add(uid)
        affinity = pod.spec.affinity
        if affinity is not None and affinity.pod_affinity is not None:
            pa = affinity.pod_affinity
            preferred = [
                w.pod_affinity_term for w in pa.preferred_during_scheduling_ignored_during_execution
            ]
            for term in [*pa.required_during_scheduling_ignored_during_execution, *preferred]:
                g = TopologyGroup(
                    TopologyType.POD_AFFINITY,
                    term.topology_key,
                    _term_namespaces(pod, term),
                    label_selector_as_selector(term.label_selector),
                )
                self._add_group(self.groups, g, pod).owners.add(uid)
        for term in [*_anti_affinity_terms(pod), *_preferred_anti_affinity_terms(pod)]:
            g = TopologyGroup(
                TopologyType.POD_ANTI_AFFINITY,
                term.topology_key,
                _term_namespaces(pod, term),
                label_selector_as_selector(term.label_selector),
            )
            self._add_group(self.groups, g, pod).owners.add(uid)

    def _add_inverse_anti_affinity(self, pod: Pod, labels: dict[str, str] | None) -> None:
        """A pod's anti-affinity also repels the pods it selects from its own domain.
        Upstream: updateInverseAntiAffinity"""
        for term in _anti_affinity_terms(pod):
            g = TopologyGroup(
                TopologyType.POD_ANTI_AFFINITY,
                term.topology_key,
                _term_namespaces(pod, term),
                label_selector_as_selector(term.label_selector),
            )
            gid = _group_id(g)
            if gid not in self.inverse:
                g.register(*self._domains_for(g.key, None, None))
                self.inverse[gid] = g
            g = self.inverse[gid]
            g.owners.add(_uid(pod))
            if labels is not None and term.topology_key in labels:
                g.record(labels[term.topology_key])

    def add_requirements(
        self, pod: Pod, node_reqs: Requirements
    ) -> tuple[Requirements | None, str]:
        """The node's requirements narrowed by every group that applies to the pod, or None
        and the reason. Upstream: Topology.AddRequirements and topologyError"""
        out = node_reqs.copy()
        # The pod's domains: its node selector and required terms, never its preferences
        # (upstream passes podData.StrictRequirements).
        strict = strict_pod_requirements(pod)
        uid = _uid(pod)
        matching = [g for g in self.groups.values() if uid in g.owners]
        matching += [g for g in self.inverse.values() if g.selects(pod)]
        for g in matching:
            pod_domains = strict.get_or_exists(g.key)
            node_domains = out.get_or_exists(g.key)
            domains = g.get(pod, pod_domains, node_domains)
            if len(domains) == 0:
                return None, (
                    f"unsatisfiable topology constraint for {g.type.value}, key={g.key} "
                    f"(counts = {g.counts_text()}, podDomains = {pod_domains}, "
                    f"nodeDomains = {node_domains}"
                )
            out.add(domains)
        return out, ""

    def record(self, pod: Pod, node_reqs: Requirements) -> None:
        """Count the pod in every group it counts towards, on the node's domain.
        Upstream: Topology.Record"""
        for g in self.groups.values():
            if not g.counts(pod, node_reqs):
                continue
            req = node_reqs.get(g.key)
            if req is None or req.complement:
                continue
            if g.type is TopologyType.POD_ANTI_AFFINITY:
                g.record(*sorted(req.values))
            elif len(req.values) == 1:
                g.record(req.any())
        if _anti_affinity_terms(pod):
            self._add_inverse_anti_affinity(pod, None)
            for g in self.inverse.values():
                if _uid(pod) in g.owners:
                    req = node_reqs.get(g.key)
                    if req is not None and not req.complement:
                        g.record(*sorted(req.values))


def _ignored_for_topology(pod: Pod) -> bool:
    """Terminal and terminating pods count in no domain. Upstream: IgnoredForTopology"""
    return (
        pod.status.phase in ("Succeeded", "Failed") or pod.metadata.deletion_timestamp is not None
    )


def _node_filter(pod: Pod) -> tuple[Requirements, ...]:
    """The node selector alone, or with each required node-affinity term (ORed).
    Upstream: MakeTopologyNodeFilter (topologynodefilter.go)"""
    selector = from_labels(pod.spec.node_selector)
    affinity = pod.spec.affinity
    na = affinity.node_affinity if affinity is not None else None
    required = na.required_during_scheduling_ignored_during_execution if na else None
    if required is None:
        return (selector,)
    out = []
    for term in required.node_selector_terms:
        reqs = selector.copy()
        reqs.add(*from_node_selector_requirements(term.match_expressions))
        out.append(reqs)
    return tuple(out)


def _matches(
    node_filter: tuple[Requirements, ...] | None,
    node_reqs: Requirements,
    allow_undefined_well_known: bool,
) -> bool:
    """Upstream: TopologyNodeFilter.matchesRequirements (any term; no terms match all)"""
    if not node_filter:
        return True
    return any(not node_reqs.compatible(r, allow_undefined_well_known) for r in node_filter)


def _requirements_id(reqs: Requirements) -> tuple[object, ...]:
    return tuple(
        (k, r.complement, tuple(sorted(r.values)), r.greater_than, r.less_than)
        for k, r in sorted(reqs.items())
    )


def _uid(pod: Pod) -> str:
    return pod.metadata.uid or f"{pod.metadata.namespace}/{pod.metadata.name}"


def _anti_affinity_terms(pod: Pod) -> list[PodAffinityTerm]:
    affinity = pod.spec.affinity
    if affinity is None or affinity.pod_anti_affinity is None:
        return []
    return list(affinity.pod_anti_affinity.required_during_scheduling_ignored_during_execution)


def _preferred_anti_affinity_terms(pod: Pod) -> list[PodAffinityTerm]:
    affinity = pod.spec.affinity
    if affinity is None or affinity.pod_anti_affinity is None:
        return []
    weighted = affinity.pod_anti_affinity.preferred_during_scheduling_ignored_during_execution
    return [w.pod_affinity_term for w in weighted]


def _untolerated(taints: Sequence[Taint], tolerations: Sequence[Toleration] | None) -> bool:
    """With nodeTaintsPolicy Honor (``tolerations`` given): a taint the owner does not
    tolerate keeps the node (or NodePool) out of the domains. Karpenter checks every taint,
    PreferNoSchedule included (kube-scheduler only NoSchedule and NoExecute).
    Upstream: TopologyNodeFilter.Matches and scheduling.Taints.Tolerates (taints.go)"""
    if tolerations is None:
        return False
    return find_matching_untolerated_taint(taints, tolerations) is not None
