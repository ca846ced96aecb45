"""What the descheduler's RemovePodsViolatingTopologySpreadConstraint would evict in one cycle.

This is a model of kubernetes-sigs/descheduler **v0.34** (the ``release-1.34`` branch: the
plugin as of descheduler#1719, "favor evictable pods when balancing domains", and the
DefaultEvictor with its legacy boolean arguments), not of kube-scheduler. It exists so that the
descheduler's guess can be set beside topospread's exact planner, so it keeps the plugin's own
counting and its known weaknesses rather than correcting them:

- Only Ready nodes exist for it: the descheduler lists the nodes matching the policy's
  ``nodeSelector`` and keeps those whose Ready condition is not False or Unknown (a node
  with no Ready condition counts as Ready; cordoned nodes are kept). The plugin lists pods on
  those nodes only, so a pod on a NotReady node is neither counted nor evicted, and a domain
  whose every node is NotReady is not pre-filled as an empty domain. Right after a zone is
  lost, its pods are simply not there for the plugin.
- Only pods that pass the plugin's pod filter exist for it: the DefaultEvictor's ``Filter``
  (no DaemonSet, mirror, static, terminating, bare, local-storage or system-critical pods, by
  default), the plugin's ``namespaces`` and ``labelSelector``, and a phase other than
  Succeeded/Failed. Unevictable pods are neither counted in a domain nor a source of
  constraints, so a domain full of them looks empty.
- Constraints are collected per namespace from those pods' own ``topologySpreadConstraints``
  (DoNotSchedule, plus ScheduleAnyway when asked), with ``matchLabelKeys`` merged into the
  selector and duplicates dropped; no default (cluster-level) constraints, and ``minDomains``
  is ignored. The pod's required node affinity and tolerations are part of a constraint (with
  the inclusion policy Honor), so replicas pinned differently make separate constraints.
- Domains: every node carrying the topology key whose node passes the constraint's inclusion
  policies (nodeAffinityPolicy Honor by default, nodeTaintsPolicy Ignore) starts as an empty
  domain; then every matching pod adds to the domain of its node's label value, even when that
  node failed the inclusion policies (the domain is then created by the pod). Unlike
  kube-scheduler, an empty selector (``{}``) counts every pod of the namespace, nodes without
  the key are simply skipped, and the skew is max minus min over all those domains.
- Each constraint is balanced on its own against the cluster as it stands: pods picked for an
  earlier constraint still count for the next one, so two constraints can together pick more
  pods than needed (descheduler#1219). Nothing simulates where the replacements land.

``balanceDomains`` sorts the domains by size and walks a low index ``i`` up and a high index
``j`` down, moving ``min(ceil(size_j - avg), ceil(avg - size_i), ceil((skew - maxSkew) / 2))``
pods from the back of domain ``j``'s list (they count toward domain ``i`` afterwards). A
domain's list is sorted once with unevictable pods first, then pods with a nodeSelector or node
affinity, each group by ascending priority (no priority first), so the pods taken first are
the highest-priority pods without node placement rules. Before each move the list is
re-sorted (stably) to put last the pods that fit some node of a below-average domain (other
than their own), using the descheduler's NodeFit (node selector and required affinity,
NoSchedule/NoExecute taints, requests against allocatable minus the requests of the pods on the
node, ``pods`` capacity, unschedulable nodes, the pod's own required anti-affinity against pods
on that node). With ``topologyBalanceNodeFit`` (default true) a chosen pod that fits none of
those nodes is not evicted, but it still counts as moved.

Where Go leaves order to chance (map iteration, ``sort.Slice``), this module is deterministic:
namespaces are taken in name order, pods in node order then in each node's order, domains of
equal size by ascending label value, equal pods keep their listing order, and evictions come in
the order the plugin picked them (upstream evicts in Go map order). The eviction API's
PodDisruptionBudget check is left to the caller: the result is the candidates in order, after
the per-cycle limits (``maxNoOfPodsToEvictPerNode``, ``...PerNamespace``, ``...Total``; unset
by default).

Not modelled: the DefaultEvictor's ``priorityThreshold`` by class name, ``minReplicas``,
``minPodAge``, ``labelSelector``, ``namespaceLabelSelector`` and pod protections beyond the
legacy booleans; ``hostPath`` volumes (topospread's API types keep only ``emptyDir``, so only
those count as local storage); a ``nodeSelector`` that is set but empty (Go tells it from an
absent one when sorting; decoded manifests cannot); the DefaultEvictor's own ``nodeSelector``
(its ``nodeFit`` checks every Ready node).

The nodes' readiness and NodeFit (pkg/descheduler/node/node.go) are in ``descheduler_node.py``;
the constraints collected and the domains counted for each, read from the cluster index, in
``descheduler_domains.py``.

Upstream: pkg/framework/plugins/removepodsviolatingtopologyspreadconstraint/
topologyspreadconstraint.go, pkg/framework/plugins/defaultevictor/defaultevictor.go,
pkg/descheduler/evictions/evictions.go, pkg/descheduler/descheduler.go (descheduler v0.34).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from topospread.analysis.descheduler_domains import Constraint, Domain, Listing, Placed
from topospread.analysis.descheduler_node import (
    POD_FAILED,
    NodeView,
    is_ready,
    pod_fits_any_other_node,
    ready_nodes,
)
from topospread.api.types import (
    DO_NOT_SCHEDULE,
    SCHEDULE_ANYWAY,
    Pod,
)
from topospread.cluster.state import ClusterState
from topospread.framework.types import NodeInfo
from topospread.labels.selector import Selector

PLUGIN_NAME: Final = "RemovePodsViolatingTopologySpreadConstraint"
DESCHEDULER_VERSION: Final = "v0.34"

# The annotation that makes any pod evictable (DefaultEvictor's evictPodAnnotationKey).
EVICT_POD_ANNOTATION_KEY: Final = "descheduler.alpha.kubernetes.io/evict"
# v1.MirrorPodAnnotationKey and the kubelet's config source annotation (static pods).
MIRROR_POD_ANNOTATION_KEY: Final = "kubernetes.io/config.mirror"
CONFIG_SOURCE_ANNOTATION_KEY: Final = "kubernetes.io/config.source"
API_SOURCE: Final = "api"
# utils.SystemCriticalPriority: system-cluster-critical and system-node-critical and above.
SYSTEM_CRITICAL_PRIORITY: Final = 2_000_000_000


@dataclass(frozen=True, slots=True)
class DeschedulerOptions:
    """The plugin's arguments, the DefaultEvictor's and the policy's per-cycle limits.

    ``include_soft_constraints`` stands for ``constraints: [DoNotSchedule, ScheduleAnyway]``
    (the v1alpha1 ``includeSoftConstraints``). ``evict_failed_bare_pods`` is the evictor's
    switch for pods without an owner: bare pods are never evictable, and with it only those in
    the Failed phase are, which this plugin never lists, so bare pods are never moved here.
    ``node_fit`` is the DefaultEvictor's ``nodeFit`` (checked just before each eviction), not
    ``topology_balance_node_fit``. ``priority_threshold`` is ``priorityThreshold.value``: pods
    at or above it are protected (unless ``evict_system_critical_pods``). The three limits are
    the policy's ``maxNoOfPodsToEvictPerNode``, ``...PerNamespace`` and ``...Total``; None is
    unlimited, and the counts start at zero (this plugin alone, one cycle). ``node_selector``
    is the policy's ``nodeSelector`` (None: every node), applied before readiness.

    Upstream: RemovePodsViolatingTopologySpreadConstraintArgs (types.go), DefaultEvictorArgs
    (defaultevictor/types.go), DeschedulerPolicy (pkg/api/types.go), v0.34
    """

    include_soft_constraints: bool = False
    topology_balance_node_fit: bool = True
    evict_local_storage_pods: bool = False
    evict_system_critical_pods: bool = False
    evict_failed_bare_pods: bool = False
    namespaces: tuple[str, ...] = ()
    exclude_namespaces: tuple[str, ...] = ()
    label_selector: Selector | None = None
    evict_daemon_set_pods: bool = False
    ignore_pvc_pods: bool = False
    priority_threshold: int | None = None
    node_fit: bool = False
    max_no_of_pods_to_evict_per_node: int | None = None
    max_no_of_pods_to_evict_per_namespace: int | None = None
    max_no_of_pods_to_evict_total: int | None = None
    node_selector: Selector | None = None


@dataclass(frozen=True, slots=True)
class DeschedulerEviction:
    """One eviction: the pod (``namespace/name``), its node, the constraint whose balancing
    picked it (``namespace/selector topologyKey``) and the domain sizes at that move."""

    pod: str
    node: str
    constraint: str
    reason: str


# ---------------------------------------------------------------------------------------------
# DefaultEvictor


def is_static_pod(pod: Pod) -> bool:
    """Upstream: IsStaticPod (pkg/utils/pod.go, v0.34)."""
    source = pod.metadata.annotations.get(CONFIG_SOURCE_ANNOTATION_KEY)
    return source is not None and source != API_SOURCE


def _has_local_storage(pod: Pod) -> bool:
    """An emptyDir or hostPath volume.

    Upstream: IsPodWithLocalStorage (pkg/utils/pod.go, v0.34)
    """
    return any(v.empty_dir is not None or v.host_path is not None for v in pod.spec.volumes)


def evictor_filter(pod: Pod, options: DeschedulerOptions) -> bool:
    """Whether the DefaultEvictor lets the pod be evicted at all.

    Upstream: DefaultEvictor.Filter and its constraints (defaultevictor.go, v0.34)
    """
    meta = pod.metadata
    if EVICT_POD_ANNOTATION_KEY in meta.annotations:
        return True
    if MIRROR_POD_ANNOTATION_KEY in meta.annotations or is_static_pod(pod):
        return False
    if meta.deletion_timestamp is not None:
        return False
    priority = pod.spec.priority
    if not options.evict_system_critical_pods and priority is not None:
        if priority >= SYSTEM_CRITICAL_PRIORITY:
            return False
        if options.priority_threshold is not None and priority >= options.priority_threshold:
            return False
    owners = meta.owner_references
    if not owners and (not options.evict_failed_bare_pods or pod.status.phase != POD_FAILED):
        return False
    if not options.evict_local_storage_pods and _has_local_storage(pod):
        return False
    if not options.evict_daemon_set_pods and any(o.kind == "DaemonSet" for o in owners):
        return False
    return not (
        options.ignore_pvc_pods
        and any(v.persistent_volume_claim is not None for v in pod.spec.volumes)
    )


def _pod_filter(pod: Pod, options: DeschedulerOptions) -> bool:
    """The plugin's pod filter: namespaces, labelSelector, then the evictor's Filter.

    Upstream: podutil.Options.BuildFilterFunc (pkg/descheduler/pod/pods.go, v0.34)
    """
    ns = pod.metadata.namespace
    if options.namespaces and ns not in options.namespaces:
        return False
    if options.exclude_namespaces and ns in options.exclude_namespaces:
        return False
    if options.label_selector is not None and not options.label_selector.matches(
        pod.metadata.labels
    ):
        return False
    return evictor_filter(pod, options)


# ---------------------------------------------------------------------------------------------
# Balancing


@dataclass(slots=True)
class _Pick:
    placed: Placed
    constraint: str
    reason: str


def topology_is_balanced(domains: Iterable[Domain], max_skew: int) -> bool:
    """No two domains differ by more than maxSkew.

    Upstream: topologyIsBalanced (topologyspreadconstraint.go, v0.34)
    """
    sizes = [len(d.pods) for d in domains]
    return not sizes or max(sizes) - min(sizes) <= max_skew


def _has_selector_or_affinity(pod: Pod) -> bool:
    """Upstream: hasSelectorOrAffinity (topologyspreadconstraint.go, v0.34)."""
    affinity = pod.spec.affinity
    return bool(pod.spec.node_selector) or (
        affinity is not None and affinity.node_affinity is not None
    )


def _pod_sort_key(placed: Placed, is_evictable: Callable[[Pod], bool]) -> tuple[int, int, int]:
    # Go's comparator puts unevictable pods first, then pods with a nodeSelector or node
    # affinity, and orders each group by ascending priority with no priority lowest; the plugin
    # takes pods from the back, so the highest-priority unpinned pods go first.
    pod = placed.pod
    priority = pod.spec.priority
    return (
        1 if is_evictable(pod) else 0,
        0 if _has_selector_or_affinity(pod) else 1,
        -(2**63) if priority is None else priority,
    )


def sort_domains(domains: Iterable[Domain], is_evictable: Callable[[Pod], bool]) -> list[Domain]:
    """Sort each domain's pods (see ``_pod_sort_key``), then the domains by ascending size.

    Upstream: sortDomains (topologyspreadconstraint.go, v0.34)
    """
    result: list[Domain] = []
    for d in sorted(domains, key=lambda d: d.value):
        pods = sorted(d.pods, key=lambda p: (_pod_sort_key(p, is_evictable), p.order))
        result.append(Domain(d.value, pods))
    result.sort(key=lambda d: len(d.pods))
    return result


def filter_nodes_below_ideal_avg(
    eligible: Sequence[NodeView], domains: Sequence[Domain], topology_key: str, ideal_avg: float
) -> list[NodeView]:
    """The eligible nodes of the domains holding fewer pods than the ideal average.

    Upstream: filterNodesBelowIdealAvg (topologyspreadconstraint.go, v0.34)
    """
    by_value: dict[str, list[NodeView]] = {}
    for view in eligible:
        value = view.node.metadata.labels.get(topology_key)
        if value is not None:
            by_value.setdefault(value, []).append(view)
    below: list[NodeView] = []
    for d in domains:
        if len(d.pods) < ideal_avg:
            below.extend(by_value.get(d.value, ()))
    return below


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def balance_domains(
    tsc: Constraint,
    domains: Iterable[Domain],
    sum_pods: int,
    views: Sequence[NodeView],
    is_evictable: Callable[[Pod], bool],
    topology_balance_node_fit: bool,
) -> list[_Pick]:
    """The pods this constraint picks, in the order it picks them.

    Upstream: balanceDomains (topologyspreadconstraint.go, v0.34)
    """
    domain_list = list(domains)
    ideal_avg = sum_pods / len(domain_list)
    sorted_domains = sort_domains(domain_list, is_evictable)
    eligible = [v for v in views if tsc.match_node_inclusion_policies(v.node)]
    below = filter_nodes_below_ideal_avg(eligible, sorted_domains, tsc.topology_key, ideal_avg)
    fits_cache: dict[tuple[int, int], bool] = {}

    def fits(placed: Placed) -> bool:
        # NOTE: the nodes below the average and every node's pods stay fixed during the call,
        # so a pod's answer does not change between the sorts.
        hit = fits_cache.get(placed.order)
        if hit is None:
            hit = pod_fits_any_other_node(placed.pod, placed.node, below)
            fits_cache[placed.order] = hit
        return hit

    key = tsc.topology_key
    picks: list[_Pick] = []
    i, j = 0, len(sorted_domains) - 1
    while i < j:
        if len(sorted_domains[j].pods) <= ideal_avg:
            j -= 1
        low, high = sorted_domains[i], sorted_domains[j]
        skew = len(high.pods) - len(low.pods)
        if skew <= tsc.max_skew:
            i += 1
            continue
        above_avg = math.ceil(len(high.pods) - ideal_avg)
        below_avg = math.ceil(ideal_avg - len(low.pods))
        half_skew = math.ceil((skew - tsc.max_skew) / 2)
        move = min(above_avg, below_avg, half_skew)
        if move <= 0:
            i += 1
            continue
        # Pods that fit a node below the average go to the back, where pods are taken from
        # (descheduler#1719); the sort is stable and runs whether or not the fit is enforced.
        high.pods.sort(key=fits)
        to_move = high.pods[len(high.pods) - move :]
        reason = (
            f"{key}={high.value} has {_plural(len(high.pods), 'matching pod')}, "
            f"{key}={low.value} has {len(low.pods)} (ideal average {ideal_avg:.2f}, "
            f"maxSkew {tsc.max_skew}): {move} to move from {key}={high.value} "
            f"toward {key}={low.value}"
        )
        for placed in to_move:
            if topology_balance_node_fit and not fits(placed):
                # Counted as moved all the same, so the walk still ends.
                continue
            picks.append(_Pick(placed, tsc.label(), reason))
        del high.pods[len(high.pods) - move :]
        low.pods.extend(to_move)
    return picks


def _allowed_actions(options: DeschedulerOptions) -> frozenset[str]:
    """The ``whenUnsatisfiable`` values acted on (the plugin's ``constraints``)."""
    if options.include_soft_constraints:
        return frozenset({DO_NOT_SCHEDULE, SCHEDULE_ANYWAY})
    return frozenset({DO_NOT_SCHEDULE})


def _limit_evictions(
    picks: Sequence[_Pick], views: Sequence[NodeView], options: DeschedulerOptions
) -> list[DeschedulerEviction]:
    """Apply the evictor's pre-eviction filter and the cycle's limits, in order.

    Upstream: the eviction loop of Balance (topologyspreadconstraint.go) and
    PodEvictor.EvictPod's limits (pkg/descheduler/evictions/evictions.go, v0.34)
    """
    per_node: dict[str, int] = {}
    per_namespace: dict[str, int] = {}
    node_limit_exceeded: set[str] = set()
    total = 0
    result: list[DeschedulerEviction] = []
    for pick in picks:
        pod, node = pick.placed.pod, pick.placed.node
        if node in node_limit_exceeded:
            continue
        if options.node_fit and not pod_fits_any_other_node(pod, node, views):
            continue
        if (
            options.max_no_of_pods_to_evict_total is not None
            and total + 1 > options.max_no_of_pods_to_evict_total
        ):
            break
        limit = options.max_no_of_pods_to_evict_per_node
        if limit is not None and per_node.get(node, 0) + 1 > limit:
            node_limit_exceeded.add(node)
            continue
        ns = pod.metadata.namespace
        limit = options.max_no_of_pods_to_evict_per_namespace
        if limit is not None and per_namespace.get(ns, 0) + 1 > limit:
            continue
        total += 1
        per_node[node] = per_node.get(node, 0) + 1
        per_namespace[ns] = per_namespace.get(ns, 0) + 1
        result.append(DeschedulerEviction(pod.key, node, pick.constraint, pick.reason))
    return result


def descheduler_evictions(
    nodes: ClusterState | Sequence[NodeInfo], options: DeschedulerOptions
) -> list[DeschedulerEviction]:
    """The pods one descheduling cycle would evict, in eviction order. ``nodes`` is the whole
    cluster: the cycle takes the Ready ones its node selector matches, as the descheduler
    hands them to the plugin. Given the cluster state, the constraints' pods are read from its
    index (``ClusterState.index()``); given a list of nodes, from the nodes, in that order.

    Upstream: RemovePodsViolatingTopologySpreadConstraint.Balance (topologyspreadconstraint.go)
    and the loop's ReadyNodes (descheduler.go, v0.34)
    """
    index = nodes.index() if isinstance(nodes, ClusterState) else None
    infos = nodes.list() if isinstance(nodes, ClusterState) else nodes
    # The DefaultEvictor's nodeFit lists Ready nodes with its own (unset) node selector, so it
    # may look past the policy's; the plugin sees only the nodes the policy selects.
    ready = [NodeView(info.node, info.pods) for info in ready_nodes(infos, None)]
    selector = options.node_selector
    views = (
        ready
        if selector is None
        else [v for v in ready if selector.matches(v.node.metadata.labels)]
    )

    def is_evictable(pod: Pod) -> bool:
        return evictor_filter(pod, options)

    listing = Listing(infos, views, index, lambda pod: _pod_filter(pod, options))
    by_namespace = listing.constraints(_allowed_actions(options))
    picks: list[_Pick] = []
    picked: set[str] = set()
    for namespace in sorted(by_namespace):
        for tsc in by_namespace[namespace]:
            domains, total = listing.domains(tsc)
            if topology_is_balanced(domains, tsc.max_skew):
                continue
            for pick in balance_domains(
                tsc, domains, total, views, is_evictable, options.topology_balance_node_fit
            ):
                # The plugin collects its picks in a set: a pod picked twice is evicted once.
                if pick.placed.pod.key not in picked:
                    picked.add(pick.placed.pod.key)
                    picks.append(pick)
    return _limit_evictions(picks, ready, options)


__all__ = [
    "DESCHEDULER_VERSION",
    "EVICT_POD_ANNOTATION_KEY",
    "PLUGIN_NAME",
    "SYSTEM_CRITICAL_PRIORITY",
    "DeschedulerEviction",
    "DeschedulerOptions",
    "descheduler_evictions",
    "evictor_filter",
    "is_ready",
    "pod_fits_any_other_node",
    "ready_nodes",
]
