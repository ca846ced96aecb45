"""A vectorised scheduling cycle for the default profile, decision for decision the reference's.

The reference path (framework/runtime.py, schedule_one.py) calls every plugin for every node, as
upstream does. This path computes the same cycle over numpy columns of the node table:

- static, per pod shape: the verdicts and raw scores of the plugins that read only the pod's
  scheduling fields and the node (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity,
  ImageLocality), taken once from the reference plugins. The shape is what those plugins read
  (namespace, node selector and affinity, tolerations, images, ports, requests, volume
  sources): names, labels and per-pod token volumes never make a pod a new shape;
- dynamic, per decision: NodeResourcesFit (filter and LeastAllocated score), BalancedAllocation,
  PodTopologySpread and InterPodAffinity. Their pod counts are kept incrementally on every bind
  and unbind — spread selectors' matching pods per domain; for inter-pod affinity, per node,
  the pods matching each term an incoming pod asks about, and the pods carrying each distinct
  term of existing pods (what upstream's PreFilter and PreScore collect by walking every pod) —
  and summed per topology domain with one vector operation, instead of recounted over every
  pod of every node;
- every filter yields, per node, the index of the status it rejects with (0: passes), in the
  profile's filter order, so that a failed attempt gets its per-node statuses and
  FailedScheduling message from the same vectors (the scheduler then runs the reference
  PostFilter over them); then upstream's sampling (nodes visited from the rotating start index
  until enough are feasible), normalisation and weights, and host selection with the same
  random draws;
- nominated pods: their requests per node, per priority, kept as the Nominator nominates and
  drops; where only NodeResourcesFit can tell a node with them from one without, the filters
  take them off the free room (the scheduler runs the reference filters on the few nodes
  holding them otherwise, and on the pod's own nominated node, tried first).

It handles the pods and profiles it can prove equal and returns None for everything else —
pods with host ports, extended resources, claims or persistent volumes, a pod whose PreFilter
narrows the nodes (a DaemonSet pod's node affinity on metadata.name), a pod whose affinity does
not parse, any non-default plugin or scoring strategy. tests/test_fastpath.py checks it against
the reference path on random clusters, decision for decision, with affinity, ports, failures,
priorities, preemption and nominations; tests/test_preemption_fit.py checks preemption's
Fit-only dry run the same way.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, cast

import msgspec
import numpy as np
import numpy.typing as npt

from topospread.api.types import (
    DO_NOT_SCHEDULE,
    LABEL_HOSTNAME,
    NODE_INCLUSION_POLICY_HONOR,
    SCHEDULE_ANYWAY,
    Container,
    Node,
    Pod,
)
from topospread.cluster.state import ClusterState
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.nominator import pod_key, pod_priority
from topospread.framework.runtime import Framework
from topospread.framework.schedule_one import (
    Diagnosis,
    SchedulingAlgorithm,
    num_feasible_nodes_to_find,
)
from topospread.framework.status import SUCCESS, Code, Status, format_reasons, new_status
from topospread.framework.types import MAX_NODE_SCORE, NodeInfo
from topospread.labels.selector import Selector, SelectorError
from topospread.nodeaffinity import get_required_node_affinity
from topospread.plugins import NODE_ONLY_FILTERS
from topospread.plugins.helper.gomath import go_round_array
from topospread.plugins.helper.normalize_score import default_normalize_score_array
from topospread.plugins.interpodaffinity.filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    pod_matches_all_affinity_terms,
)
from topospread.plugins.interpodaffinity.plugin import InterPodAffinity
from topospread.plugins.interpodaffinity.scoring import has_preferred_constraints
from topospread.plugins.interpodaffinity.terms import (
    AffinityTerm,
    NamespaceLabels,
    PodAffinityTerms,
    has_pod_affinity,
    parse_pod_affinity_terms,
)
from topospread.plugins.noderesources.fit import (
    REASON_INSUFFICIENT_CPU,
    REASON_INSUFFICIENT_EPHEMERAL_STORAGE,
    REASON_INSUFFICIENT_MEMORY,
    REASON_TOO_MANY_PODS,
    compute_pod_resource_request,
)
from topospread.plugins.noderesources.resource_helpers import (
    allocatable_resource,
    calculate_resource,
)
from topospread.plugins.podtopologyspread.common import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    InternalConstraint,
)
from topospread.plugins.podtopologyspread.filtering import PreFilterState, state_from_counts
from topospread.plugins.podtopologyspread.plugin import PodTopologySpread
from topospread.plugins.podtopologyspread.scoring import topology_normalizing_weight

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
B = npt.NDArray[np.bool_]

# Filters whose PreFilter must Skip for this path to apply (they read only the pod's spec).
_SKIPPING_FILTERS: Final = (
    "NodePorts",
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "DynamicResources",
)
# Of those, the ones whose PreFilter writes state before it skips, read by their later points
# (PostFilter, Reserve, PreBind): ``seed_state`` runs them on the decision's cycle state.
_SEEDING_FILTERS: Final = ("DynamicResources",)
_DYNAMIC_FILTERS: Final = ("NodeResourcesFit", "PodTopologySpread", "InterPodAffinity")
_STATIC_SCORES: Final = ("TaintToleration", "NodeAffinity", "ImageLocality")
_NORMALIZED_STATIC: Final = {"TaintToleration": True, "NodeAffinity": False}  # name -> reverse
_MAX_INT32: Final = 2**31 - 1
_IPA: Final = "InterPodAffinity"

# Kinds of inter-pod affinity terms carried by existing pods.
_REQUIRED_AFFINITY: Final = 0
_REQUIRED_ANTI_AFFINITY: Final = 1
_PREFERRED_AFFINITY: Final = 2
_PREFERRED_ANTI_AFFINITY: Final = 3

# NodeResourcesFit's reasons by bit, in fitsRequest's order.
_FIT_REASONS: Final = (
    REASON_TOO_MANY_PODS,
    REASON_INSUFFICIENT_CPU,
    REASON_INSUFFICIENT_MEMORY,
    REASON_INSUFFICIENT_EPHEMERAL_STORAGE,
)
_FIT_UNRESOLVABLE: Final = 16

# The static plugins that read a node's spec (its taints, its unschedulable flag) — the rest
# read its name, labels and images.
_SPEC_READERS: Final = frozenset({"NodeUnschedulable", "TaintToleration"})

# Changed rows replayed one by one into a shape's kept resource scores; past this many the
# whole vector is recomputed. And how long the log of changed rows grows before it restarts.
_REPLAYED_ROWS: Final = 32
_LEAST: Final = "least"
_BALANCED: Final = "balanced"
_FIT: Final = "fit"
_FIT_NAME: Final = "NodeResourcesFit"
_CHANGED_ROWS_KEPT: Final = 1 << 16

# The node table's per-node int64 columns carried over a rebuild (min_priority aside: its
# fill is not 0; the free_* columns are derived).
_ROW_COLUMNS: Final = (
    "alloc_cpu",
    "alloc_mem",
    "alloc_eph",
    "alloc_pods",
    "req_cpu",
    "req_mem",
    "req_eph",
    "pod_count",
    "nz_cpu",
    "nz_mem",
)


@dataclass(slots=True)
class FastResult:
    """What the reference ScheduleResult and a Decision need, for one successful attempt."""

    host: str
    feasible: list[str]
    # The nodes visited and rejected, with their reasons as reports show them (with detail).
    rejected: dict[str, list[str]] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)
    plugin_scores: dict[str, dict[str, int]] = field(default_factory=dict)


@dataclass(slots=True)
class FastFailure:
    """No node fits: the diagnosis the reference filters would have written, and each node's
    status as an index into the path's status table."""

    diagnosis: Diagnosis
    rejected_with: I32 | None = None
    # Per node, whether its status is Unschedulable (preemption may help): taken once.
    unschedulable: B | None = None


class _Counter:
    """Matching pods per domain of one topology key, over the nodes eligible for a constraint.

    NOTE: kept exact by on_bind/on_unbind: a pod counts when ``_spread_counts`` holds for it
    and it is bound to an eligible node.
    """

    __slots__ = ("codes", "counts", "eligible", "has", "namespace", "safe_codes", "selector")

    def __init__(self, c: InternalConstraint, namespace: str, codes: I32,
                 eligible: B, n_domains: int) -> None:  # fmt: skip
        self.selector = c.selector
        self.namespace = namespace
        self.codes = codes
        self.has: B = codes >= 0
        self.safe_codes = np.where(self.has, codes, 0)
        self.eligible = eligible
        self.counts: I64 = np.zeros(max(n_domains, 1), dtype=np.int64)


def _spread_counts(pod: Pod, namespace: str, selector: Selector) -> bool:
    """Whether a bound pod counts for a spread constraint of a pod in ``namespace``: in that
    namespace, not terminating, matched by the (non-empty) selector."""
    meta = pod.metadata
    return (
        meta.namespace == namespace
        and meta.deletion_timestamp is None
        and not selector.empty
        and selector.matches(meta.labels)
    )


@dataclass(slots=True)
class _Matching:
    """Per node, the bound pods one spread selector counts in one namespace
    (``_spread_counts``), and the counters built from it.

    NOTE: kept exact by on_bind/on_unbind, and carried over node table rebuilds (only the
    nodes that came or changed are recounted)."""

    per_node: I64
    counters: list[_Counter] = field(default_factory=list)


class _PodCounts:
    """Per node, the bound pods a predicate holds for (terminating pods included, as
    InterPodAffinity counts them).

    NOTE: kept exact by on_bind/on_unbind; the predicate must not change its answer for a pod
    while the counter lives (namespace labels are the one outside input: the counters are
    dropped when the namespaces change).
    """

    __slots__ = ("match", "per_node")

    def __init__(self, match: Callable[[Pod], bool], n: int) -> None:
        self.match = match
        self.per_node: I64 = np.zeros(n, np.int64)


@dataclass(slots=True)
class _Static:
    """Everything about one pod shape that does not change between its decisions."""

    filter_status: dict[str, I32]  # static filter -> status index per node (0: passes)
    rejects: dict[str, bool]  # static filter -> whether it rejects any node
    skip_filters: frozenset[str]  # filters whose PreFilter skipped
    static_scores: dict[str, I64]
    skipped_scores: frozenset[str]
    req_cpu: int
    req_mem: int
    req_eph: int
    score_req: tuple[int, int]  # LeastAllocated's non-zero cpu, memory request
    balanced_req: tuple[int, int] | None  # None: BalancedAllocation skips (best effort)
    terms: PodAffinityTerms
    has_preferred_terms: bool  # the spec has preferred (anti-)affinity terms
    # What a node's row is recomputed from when that node changes in place.
    pod: Pod
    state: CycleState
    # Per node values that read the nodes' resources (LeastAllocated's and
    # BalancedAllocation's scores, NodeResourcesFit's shortage bits), by kind, each with the
    # position in the path's log of changed rows it is current to (``_per_node``).
    kept: dict[str, tuple[npt.NDArray[Any], int]] = field(default_factory=dict)
    # Static score -> whether it is 0 on every node (taken on first use, dropped when a row
    # of it changes): nothing to index or normalize per decision.
    all_zero: dict[str, bool] = field(default_factory=dict)


@dataclass(slots=True)
class _Signature:
    """A pod shape and its spread constraints, resolved against the node table."""

    static: _Static
    hard: list[tuple[InternalConstraint, _Counter, I64]]  # constraint, counter, its domains
    soft: list[tuple[InternalConstraint, _Counter | None]]  # None: hostname (per node)
    soft_require_all: bool
    soft_eligible_all: B  # nodes holding every soft topology key
    skipped_scores: frozenset[str]
    host_counters: list[_Counter] = field(default_factory=list)


@dataclass(slots=True)
class _Nominated:
    """The nominated pods of one priority, their requests summed per node."""

    cpu: I64
    mem: I64
    eph: I64
    pods: I64
    with_affinity: int = 0  # how many carry pod (anti-)affinity


class FastPath:
    """The vectorised cycle over one ClusterState; registers itself as the state's listener
    (and as its scheduler's Nominator's)."""

    # The node table's columns, one row per node in node-tree order (``_rebuild``).
    alloc_cpu: I64
    alloc_mem: I64
    alloc_eph: I64
    alloc_pods: I64
    req_cpu: I64
    req_mem: I64
    req_eph: I64
    pod_count: I64
    nz_cpu: I64
    nz_mem: I64
    min_priority: I64
    free_cpu: I64  # alloc - req, kept with each bind
    free_mem: I64
    free_eph: I64
    free_pods: I64  # alloc_pods - pod_count - 1 >= 0 means room

    def __init__(self, cluster: ClusterState, fwk: Framework, features: Features) -> None:
        self.cluster = cluster
        self.fwk = fwk
        self.features = features
        self.supported = self._profile_supported()
        self._seeding = [pl for pl in fwk.pre_filter_plugins if pl.name in _SEEDING_FILTERS]
        ipa = fwk.plugins.get(_IPA)
        self._ipa: InterPodAffinity | None = ipa if isinstance(ipa, InterPodAffinity) else None
        self._statics: dict[bytes, _Static | None] = {}
        self._signatures: dict[tuple[bytes, Any], _Signature | None] = {}
        self._counters: list[_Counter] = []
        # Per namespace and spread selector, its pods per node and its counters: a bind asks
        # each selector once.
        self._matching: dict[str, dict[Selector, _Matching]] = {}
        # (namespace, a pod's labels) -> the selectors' entries matching them.
        self._matched_by_labels: dict[tuple[str, tuple[tuple[str, str], ...]], list[_Matching]] = {}
        self._pod_counts: dict[Any, _PodCounts] = {}
        # (kind, term, weight) -> per node, the bound pods carrying that term.
        self._carried: dict[tuple[int, AffinityTerm, int], I64] = {}
        self._carried_matching: dict[Any, list[tuple[int, AffinityTerm, int, I64]]] = {}
        self._last_carried: tuple[Pod | None, list[tuple[int, AffinityTerm, int, I64]]] = (
            None,
            [],
        )
        self._objects: Any = None
        self._namespaces: Any = None
        self._constraints_objects: Any = None
        self._constraints_memo: dict[bytes, Any] = {}
        # Statuses by index (0: SUCCESS), so that filters can answer with int arrays.
        self._status_table: list[Status] = [SUCCESS]
        self._status_index: dict[Status, int] = {SUCCESS: 0}
        self._formatted_table: list[list[str]] = []
        self._unresolved_codes: B = np.zeros(0, np.bool_)
        self._fit_table = np.zeros(32, np.int32)
        for bits in range(1, 32):
            if bits & 15:
                reasons = [r for b, r in enumerate(_FIT_REASONS) if bits & (1 << b)]
                code = Code.UnschedulableAndUnresolvable if bits & 16 else Code.Unschedulable
                self._fit_table[bits] = self._intern(
                    new_status(code, *reasons).with_plugin("NodeResourcesFit")
                )
        spread, ipa_name = "PodTopologySpread", _IPA
        self._spread_missing = self._intern(
            new_status(Code.UnschedulableAndUnresolvable, ERR_REASON_NODE_LABEL_NOT_MATCH)
            .with_plugin(spread)
        )  # fmt: skip
        self._spread_skew = self._intern(
            new_status(Code.Unschedulable, ERR_REASON_CONSTRAINTS_NOT_MATCH).with_plugin(spread)
        )
        self._ipa_affinity = self._intern(
            new_status(Code.UnschedulableAndUnresolvable, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
            .with_plugin(ipa_name)
        )  # fmt: skip
        self._ipa_anti = self._intern(
            new_status(Code.Unschedulable, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
            .with_plugin(ipa_name)
        )  # fmt: skip
        self._ipa_existing = self._intern(
            new_status(Code.Unschedulable, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
            .with_plugin(ipa_name)
        )  # fmt: skip
        # Nominated pods: key -> (pod, node), and their requests per priority, per node.
        self._nominations: dict[str, tuple[Pod, str]] = {}
        self._nominated: dict[int, _Nominated] = {}
        # Bound pods' requests per priority, per node: what preemption can take from each node
        # for a pod of a higher priority (``preemption_screen``).
        self._bound: dict[int, _Nominated] = {}
        self._stale = False  # nodes came or went: the table is rebuilt before its next use
        # The rows of the table as last built (NodeInfo and Node objects), and the nodes whose
        # pods changed while the table was stale: a rebuild recounts only those rows and the
        # rows of nodes that came or changed.
        self._row_infos: list[NodeInfo] = []
        self._row_nodes: list[Node] = []
        self._dirty: set[str] = set()
        self._images = False  # whether any node reports images
        # The rows whose resources changed, in order (the statics' score caches replay it).
        self._changed_rows: list[int] = []
        self._plugins_by_name: tuple[dict[str, Any], dict[str, Any]] | None = None
        # (shape key, node spec encoded), plugin, whether scored -> its filter's status index
        # or its score there (on_node_updated).
        self._spec_rows: dict[tuple[tuple[bytes, bytes], str, bool], int] = {}
        self.names: list[str] = []
        self.index: dict[str, int] = {}
        for column in (*_ROW_COLUMNS, "min_priority"):
            setattr(self, column, np.zeros(0, np.int64))
        self._rebuild()
        cluster.listeners.append(self)

    def _intern(self, status: Status) -> int:
        index = self._status_index.get(status)
        if index is None:
            index = self._status_index[status] = len(self._status_table)
            self._status_table.append(status)
        return index

    # ------------------------------------------------------------------ the node table

    def _rebuild(self) -> None:
        """Build the node table for the cluster's nodes in node-tree order. Rows of nodes the
        last table had, unchanged (the same NodeInfo, Node and pods), are carried over with
        everything counted on them — resources, spread selectors' pods, inter-pod affinity
        terms, each pod shape's static verdicts and scores — and only the other rows are
        computed, so that a node's loss or return costs its own rows, not a recount of every
        pod (a sweep's node failures). tests/test_fastpath.py checks the table against one
        built from scratch after random node and pod churn (and tests/test_simulation.py after
        every step of random timelines)."""
        self._stale = False
        self._changed_rows = []
        infos = list(self.cluster.list())
        n = len(infos)
        old_index = self.index
        old_infos, old_nodes = self._row_infos, self._row_nodes
        src = np.full(n, -1, np.int64)  # each row's row in the last table (-1: none)
        for i, info in enumerate(infos):
            j = old_index.get(info.name)
            if (
                j is not None
                and old_infos[j] is info
                and old_nodes[j] is info.node
                and info.name not in self._dirty
            ):
                src[i] = j
        self._dirty.clear()
        kept = np.flatnonzero(src >= 0)
        fresh = np.flatnonzero(src < 0).tolist()
        from_rows = src[kept]

        def carry(old: I64, fill: int = 0) -> I64:
            new = np.full(n, fill, np.int64)
            new[kept] = old[from_rows]
            return new

        self.names = [i.name for i in infos]
        self.index = {name: i for i, name in enumerate(self.names)}
        self._row_infos = infos
        self._row_nodes = [info.node for info in infos]
        old_images, self._images = self._images, any(info.node.status.images for info in infos)
        for column in _ROW_COLUMNS:
            setattr(self, column, carry(getattr(self, column)))
        self._bound = {
            p: _Nominated(carry(lv.cpu), carry(lv.mem), carry(lv.eph), carry(lv.pods))
            for p, lv in self._bound.items()
        }
        # The lowest priority among each node's pods (preemption can only take lower ones).
        self.min_priority = carry(self.min_priority, _MAX_INT32 + 1)
        # Derived below; _account keeps them as it counts the fresh rows' pods.
        self.free_cpu, self.free_mem, self.free_eph, self.free_pods = (
            np.zeros(n, np.int64) for _ in range(4)
        )
        self._codes: dict[str, tuple[I32, dict[str, int]]] = {}
        self._single_valued: dict[str, bool] = {}
        self._every_node_has: dict[str, bool] = {}
        self._sums_memo: dict[tuple[str, int], tuple[I64, tuple[B, I64, int]]] = {}
        self._carried = {key: carry(row) for key, row in self._carried.items()}
        self._carried_matching = {}
        self._last_carried = (None, [])
        for pc in self._pod_counts.values():
            pc.per_node = carry(pc.per_node)
        selectors = [
            (namespace, selector, m)
            for namespace, by_selector in self._matching.items()
            for selector, m in by_selector.items()
        ]
        for _, _, m in selectors:
            m.per_node = carry(m.per_node)
            m.counters.clear()
        for i in fresh:
            info = infos[i]
            a = allocatable_resource(info.node)
            self.alloc_cpu[i] = a.milli_cpu
            self.alloc_mem[i] = a.memory
            self.alloc_eph[i] = a.ephemeral_storage
            self.alloc_pods[i] = a.allowed_pod_number
            for pod in info.pods:
                self._account(pod, i, 1)
                for pc in self._pod_counts.values():
                    if pc.match(pod):
                        pc.per_node[i] += 1
                for namespace, selector, m in selectors:
                    if _spread_counts(pod, namespace, selector):
                        m.per_node[i] += 1
        self.free_cpu = self.alloc_cpu - self.req_cpu
        self.free_mem = self.alloc_mem - self.req_mem
        self.free_eph = self.alloc_eph - self.req_eph
        self.free_pods = self.alloc_pods - self.pod_count  # - 1 >= 0 means room
        # Two copies of 0..n-1: the visiting order from any start is a slice, not a new array.
        self._double_order = np.concatenate((np.arange(n), np.arange(n)))
        self._all_alloc = bool((self.alloc_cpu != 0).all() and (self.alloc_mem != 0).all())
        self._carry_statics(infos, kept, from_rows, fresh, old_images)
        self._signatures.clear()
        self._counters.clear()
        self._nominated.clear()
        for pod, node_name in self._nominations.values():
            self._count_nominated(pod, node_name, 1)

    def _carry_statics(
        self,
        infos: Sequence[NodeInfo],
        kept: npt.NDArray[np.intp],
        from_rows: npt.NDArray[np.intp],
        fresh: list[int],
        old_images: bool,
    ) -> None:
        """Carry each pod shape's static verdicts and scores over to the new table, computing
        the fresh rows; shapes that cannot be carried are dropped (rebuilt on their next pod):
        those the path declined, and those scored by ImageLocality while any node reports
        images (its scores read how many nodes hold each image)."""
        n = len(infos)
        carried: dict[bytes, _Static | None] = {}
        for key, static in self._statics.items():
            if not isinstance(static, _Static):
                continue
            if "ImageLocality" in static.static_scores and (old_images or self._images):
                continue
            filter_status = {}
            for name, arr in static.filter_status.items():
                new = np.zeros(n, np.int32)
                new[kept] = arr[from_rows]
                filter_status[name] = new
            static_scores = {}
            for name, scores in static.static_scores.items():
                new_scores = np.zeros(n, np.int64)
                new_scores[kept] = scores[from_rows]
                static_scores[name] = new_scores
            static.filter_status, static.static_scores = filter_status, static_scores
            static.kept.clear()  # the rows moved
            static.all_zero.clear()
            if all(self._refresh_row(static, infos[i], i) for i in fresh):
                static.rejects = {name: bool(arr.any()) for name, arr in filter_status.items()}
                carried[key] = static
        self._statics = carried

    def _account(self, pod: Pod, i: int, sign: int) -> None:
        self._changed_rows.append(i)
        r = calculate_resource(pod, self.features)
        self.req_cpu[i] += sign * r.resource.milli_cpu
        self.req_mem[i] += sign * r.resource.memory
        self.req_eph[i] += sign * r.resource.ephemeral_storage
        self.free_cpu[i] -= sign * r.resource.milli_cpu
        self.free_mem[i] -= sign * r.resource.memory
        self.free_eph[i] -= sign * r.resource.ephemeral_storage
        self.free_pods[i] -= sign
        self.nz_cpu[i] += sign * r.non0_cpu
        self.nz_mem[i] += sign * r.non0_mem
        self.pod_count[i] += sign
        priority = pod_priority(pod)
        level = self._bound.get(priority)
        if level is None:
            n = len(self.names)
            zeros = [np.zeros(n, np.int64) for _ in range(4)]
            level = self._bound[priority] = _Nominated(zeros[0], zeros[1], zeros[2], zeros[3])
        level.cpu[i] += sign * r.resource.milli_cpu
        level.mem[i] += sign * r.resource.memory
        level.eph[i] += sign * r.resource.ephemeral_storage
        level.pods[i] += sign
        if sign > 0:
            self.min_priority[i] = min(int(self.min_priority[i]), priority)
        elif priority == self.min_priority[i]:
            # The pod has left the NodeInfo already: the minimum of those that remain.
            pods = self.cluster.infos[self.names[i]].pods
            self.min_priority[i] = min((pod_priority(p) for p in pods), default=_MAX_INT32 + 1)
        if self._ipa is not None and has_pod_affinity(pod):
            self._carry(pod, i, sign)

    def _carry(self, pod: Pod, i: int, sign: int) -> None:
        """Count the inter-pod affinity terms a bound pod carries on its node."""
        assert self._ipa is not None
        terms = self._ipa.terms_cache.get(pod)
        n = len(self.names)
        kinds: tuple[tuple[int, Sequence[Any]], ...] = (
            (_REQUIRED_AFFINITY, terms.required_affinity_terms),
            (_REQUIRED_ANTI_AFFINITY, terms.required_anti_affinity_terms),
        )
        for kind, required in kinds:
            for t in required:
                self._carried_row((kind, t, 0), n)[i] += sign
        for kind, preferred in (
            (_PREFERRED_AFFINITY, terms.preferred_affinity_terms),
            (_PREFERRED_ANTI_AFFINITY, terms.preferred_anti_affinity_terms),
        ):
            for wt in preferred:
                self._carried_row((kind, wt.term, wt.weight), n)[i] += sign

    def _carried_row(self, key: tuple[int, AffinityTerm, int], n: int) -> I64:
        row = self._carried.get(key)
        if row is None:
            row = self._carried[key] = np.zeros(n, np.int64)
            self._carried_matching.clear()  # a new term: every pod's matches are stale
            self._last_carried = (None, [])
        return row

    def codes(self, key: str) -> tuple[I32, dict[str, int]]:
        """Each node's domain code for ``key`` (-1: no such label) and the value -> code map."""
        cached = self._codes.get(key)
        if cached is None:
            values: dict[str, int] = {}
            arr = np.full(len(self.names), -1, np.int32)
            for i, name in enumerate(self.names):
                v = self.cluster.infos[name].node.metadata.labels.get(key)
                if v is not None:
                    arr[i] = values.setdefault(v, len(values))
            cached = self._codes[key] = (arr, values)
        return cached

    # ClusterListener
    def on_nodes_changed(self) -> None:
        # NOTE: rebuilt on next use, so that adding a thousand nodes costs one rebuild.
        self._stale = True

    def _fresh(self) -> None:
        if self._stale:
            self._rebuild()

    def on_node_updated(self, old: Node, new: Node) -> None:
        """A node changed in place. Where its labels and images stay (a taint, cordoning, its
        allocatable: what a zone outage or a drain changes on many nodes at once), only its
        row is recomputed — allocatable, and each pod shape's static verdicts and scores on
        it; signatures whose spread constraints honour taints are dropped (rebuilt on their
        next pod). Anything else rebuilds the table."""
        if self._stale:
            return  # the rebuild will read the node as it is
        i = self.index.get(new.metadata.name)
        if (
            i is None
            or old.metadata.labels != new.metadata.labels
            or old.status.images != new.status.images
        ):
            self._rebuild()
            return
        self._row_nodes[i] = new
        self._changed_rows.append(i)
        a = allocatable_resource(new)
        self.alloc_cpu[i], self.alloc_mem[i] = a.milli_cpu, a.memory
        self.alloc_eph[i], self.alloc_pods[i] = a.ephemeral_storage, a.allowed_pod_number
        self.free_cpu[i] = self.alloc_cpu[i] - self.req_cpu[i]
        self.free_mem[i] = self.alloc_mem[i] - self.req_mem[i]
        self.free_eph[i] = self.alloc_eph[i] - self.req_eph[i]
        self.free_pods[i] = self.alloc_pods[i] - self.pod_count[i]
        if not (self._all_alloc and a.milli_cpu and a.memory):
            self._all_alloc = bool((self.alloc_cpu != 0).all() and (self.alloc_mem != 0).all())
        info = self.cluster.infos[new.metadata.name]
        # Labels, images and name unchanged: of the static plugins only those reading the
        # node's taints and unschedulable flag can answer differently, and they answer alike
        # for alike nodes (a zone outage taints thousands the same way).
        spec = _KEY_ENCODER.encode((new.spec.taints, new.spec.unschedulable))
        if len(self._spec_rows) > 65536:
            self._spec_rows.clear()
        stale = {
            key
            for key, static in self._statics.items()
            if not isinstance(static, _Static)
            or not self._refresh_row(static, info, i, memo=(key, spec))
        }
        for key in stale:
            del self._statics[key]
        for sig_key in list(self._signatures):
            shape, constraints = sig_key
            if shape in stale or _honours_taints(constraints):
                del self._signatures[sig_key]

    def _refresh_row(
        self, static: _Static, info: NodeInfo, i: int, memo: tuple[bytes, bytes] | None = None
    ) -> bool:
        """Recompute one node's static filter verdicts and scores for a pod shape; False
        when a plugin errs there (the shape is then rebuilt, and declined, on its next pod).
        ``memo`` (the shape's key, the node's taints and unschedulable flag encoded): only the
        node's spec changed, so only the plugins reading it are asked, each answer kept for
        the next node with that spec."""
        if self._plugins_by_name is None:
            self._plugins_by_name = (
                {pl.name: pl for pl in self.fwk.filter_plugins},
                {pl.name: pl for pl in self.fwk.score_plugins},
            )
        filters, scorers = self._plugins_by_name
        for name, arr in static.filter_status.items():
            if memo is not None and name not in _SPEC_READERS:
                continue
            found = self._spec_rows.get((memo, name, False)) if memo is not None else None
            if found is None:
                status = filters[name].filter(static.state, static.pod, info)
                if status.is_success:
                    found = 0
                elif status.is_rejected:
                    found = self._intern(status.with_plugin(name))
                else:
                    return False
                if memo is not None:
                    self._spec_rows[(memo, name, False)] = found
            if arr[i] == found:
                continue
            arr[i] = found
            static.rejects[name] = True if found else bool(arr.any())
        for name, scores in static.static_scores.items():
            if memo is not None and name not in _SPEC_READERS:
                continue
            found = self._spec_rows.get((memo, name, True)) if memo is not None else None
            if found is None:
                score, status = scorers[name].score(static.state, static.pod, info)
                if not status.is_success:
                    return False
                found = score
                if memo is not None:
                    self._spec_rows[(memo, name, True)] = found
            if scores[i] != found:
                scores[i] = found
                static.all_zero.pop(name, None)
        return True

    def on_bind(self, pod: Pod, node_name: str) -> None:
        if self._stale:
            self._dirty.add(node_name)  # the rebuild recounts its row
            return
        i = self.index[node_name]
        self._account(pod, i, 1)
        self._count_spread(pod, i, 1)
        for pc in self._pod_counts.values():
            if pc.match(pod):
                pc.per_node[i] += 1

    def on_unbind(self, pod: Pod, node_name: str) -> None:
        if self._stale:
            self._dirty.add(node_name)
            return
        i = self.index[node_name]
        self._account(pod, i, -1)
        self._count_spread(pod, i, -1)
        for pc in self._pod_counts.values():
            if pc.match(pod):
                pc.per_node[i] -= 1

    def _count_spread(self, pod: Pod, i: int, sign: int) -> None:
        """The spread selectors a pod on node ``i`` counts for (``_spread_counts``, each
        selector asked once), and their counters."""
        meta = pod.metadata
        if meta.deletion_timestamp is not None:
            return
        groups = self._matching.get(meta.namespace)
        if not groups:
            return
        key = (meta.namespace, tuple(meta.labels.items()))
        matched = self._matched_by_labels.get(key)
        if matched is None:
            labels = meta.labels
            matched = [m for sel, m in groups.items() if not sel.empty and sel.matches(labels)]
            if len(self._matched_by_labels) > 4096:
                self._matched_by_labels.clear()
            self._matched_by_labels[key] = matched
        for m in matched:
            m.per_node[i] += sign
            for c in m.counters:
                if c.eligible[i]:
                    c.counts[c.codes[i]] += sign

    # NominatorListener
    def on_nominated(self, pod: Pod, node_name: str, sign: int) -> None:
        if sign > 0:
            self._nominations[pod_key(pod)] = (pod, node_name)
        else:
            self._nominations.pop(pod_key(pod), None)
        self._count_nominated(pod, node_name, sign)

    def _count_nominated(self, pod: Pod, node_name: str, sign: int) -> None:
        if self._stale:
            return  # the rebuild counts self._nominations
        i = self.index.get(node_name)
        if i is None:
            return  # a node the cluster does not have: no filter ever sees the pod
        priority = pod_priority(pod)
        level = self._nominated.get(priority)
        if level is None:
            n = len(self.names)
            zeros = [np.zeros(n, np.int64) for _ in range(4)]
            level = _Nominated(zeros[0], zeros[1], zeros[2], zeros[3])
            self._nominated[priority] = level
        r = calculate_resource(pod, self.features).resource
        level.cpu[i] += sign * r.milli_cpu
        level.mem[i] += sign * r.memory
        level.eph[i] += sign * r.ephemeral_storage
        level.pods[i] += sign
        if has_pod_affinity(pod):
            level.with_affinity += sign

    def counts_nominated(self, pod: Pod) -> bool:
        """Whether the vectors can take the nominated pods into account for this pod: only
        NodeResourcesFit can then tell a node with them from one without (no DoNotSchedule
        spread constraint, no required inter-pod term of the pod's own, none of the nominated
        pods of at least its priority carrying pod (anti-)affinity)."""
        sig = self._signature(pod) if self.accepts(pod) else None
        if sig is None or sig.hard:
            return False
        terms = sig.static.terms
        if terms.required_affinity_terms or terms.required_anti_affinity_terms:
            return False
        priority = pod_priority(pod)
        return not any(level.with_affinity for p, level in self._nominated.items() if p >= priority)

    def _nominated_requests(self, pod: Pod) -> tuple[I64, I64, I64, I64]:
        """Per node, what the nominated pods of at least the pod's priority (the pod aside)
        request: cpu, memory, ephemeral storage, and how many they are.

        Upstream: addGENominatedPods (framework.go, v1.35), over every node at once
        """
        n = len(self.names)
        cpu, mem, eph, pods = (np.zeros(n, np.int64) for _ in range(4))
        priority = pod_priority(pod)
        for p, level in self._nominated.items():
            if p >= priority:
                cpu += level.cpu
                mem += level.mem
                eph += level.eph
                pods += level.pods
        own = self._nominations.get(pod_key(pod))
        i = self.index.get(own[1]) if own is not None else None
        if own is not None and i is not None and pod_priority(own[0]) >= priority:
            r = calculate_resource(own[0], self.features).resource
            cpu[i] -= r.milli_cpu
            mem[i] -= r.memory
            eph[i] -= r.ephemeral_storage
            pods[i] -= 1
        return cpu, mem, eph, pods

    # ------------------------------------------------------------------ applicability

    def _profile_supported(self) -> bool:
        known = set(NODE_ONLY_FILTERS) | set(_SKIPPING_FILTERS) | set(_DYNAMIC_FILTERS)
        if any(pl.name not in known for pl in self.fwk.filter_plugins):
            return False
        if any(pl.name not in known for pl in self.fwk.pre_filter_plugins):
            return False
        scores = set(_STATIC_SCORES) | {
            "NodeResourcesFit",
            "NodeResourcesBalancedAllocation",
            "PodTopologySpread",
            _IPA,
        }
        if any(pl.name not in scores for pl in self.fwk.score_plugins):
            return False
        ipa = self.fwk.plugins.get(_IPA)
        if ipa is not None and not isinstance(ipa, InterPodAffinity):
            return False
        spread = self.fwk.plugins.get("PodTopologySpread")
        if spread is not None and not isinstance(spread, PodTopologySpread):
            return False
        fit: Any = self.fwk.plugins.get("NodeResourcesFit")
        if fit is not None:
            scorer = getattr(fit, "scorer", None)
            if scorer is None or scorer.name != "LeastAllocated":
                return False
            if [r.name for r in scorer.resources] != ["cpu", "memory"]:
                return False
        balanced: Any = self.fwk.plugins.get("NodeResourcesBalancedAllocation")
        if balanced is not None:
            resources = [r.name for r in balanced.scorer.resources]
            if resources != ["cpu", "memory"]:
                return False
        return True

    def accepts(self, pod: Pod) -> bool:
        """Whether this path may decide the pod's attempt (its signature may still decline)."""
        self._fresh()
        return self.supported and bool(self.names) and self._pod_supported(pod)

    def _pod_supported(self, pod: Pod) -> bool:
        spec = pod.spec
        if spec.node_name:
            return False
        if any(v.persistent_volume_claim is not None or v.ephemeral is not None
               for v in spec.volumes) or spec.resource_claims:  # fmt: skip
            return False
        for c in (*spec.init_containers, *spec.containers):
            if any(p.host_port for p in c.ports):
                return False
        return True

    def spread_state(self, pod: Pod, *, shape_of: Pod | None = None) -> PreFilterState | None:
        """PodTopologySpread's PreFilter state for ``pod`` (its hard constraints' matching
        pods per eligible domain) read off the counters this path keeps for its decisions,
        instead of counting every pod of every node; None where this path declines the pod
        (the caller counts as the reference does). Reports read it: tests compare them with
        the reference's on random timelines.

        NOTE: only for a pod whose shape (``shape_of``'s, by default its own: a report's probe
        is a workload pod with other constraints, which shares it) this path has decided: its
        static verdicts are kept (over node table rebuilds too), and its selectors' pods per
        node are counted once and kept current (a sweep's runs read them from the base
        state). For shapes never decided, the static verdicts would cost more than the
        caller's one walk over the pods."""
        decided = self._statics.get(_static_key(shape_of if shape_of is not None else pod))
        if not self.accepts(pod) or not isinstance(decided, _Static):
            return None
        sig = self._signature(pod)
        if sig is None:
            return None
        tallies: list[dict[str, int]] = []
        for c, counter, domains in sig.hard:
            names = list(self.codes(c.topology_key)[1])  # the domain values by code
            counts = counter.counts
            tallies.append({names[d]: int(counts[d]) for d in domains.tolist()})
        return state_from_counts([c for c, _, _ in sig.hard], tallies)

    def _unresolved(self) -> B:
        """Per status index: whether its code is Unschedulable (preemption may help)."""
        table = self._status_table
        if len(self._unresolved_codes) != len(table):
            self._unresolved_codes = np.fromiter(
                (s.code is Code.Unschedulable for s in table), np.bool_, len(table)
            )
        return self._unresolved_codes

    def unschedulable_positions(self, failure: FastFailure) -> Sequence[int] | None:
        """The positions, in node order, of the nodes a failure rejected as Unschedulable (an
        array: a victimless dry run reads its length and one position of thousands)."""
        if failure.rejected_with is None:
            return None
        positions = np.flatnonzero(self._unschedulable(failure))
        return cast(Sequence[int], positions)

    def _unschedulable(self, failure: FastFailure) -> B:
        assert failure.rejected_with is not None
        if failure.unschedulable is None:
            failure.unschedulable = self._unresolved()[failure.rejected_with]
        return failure.unschedulable

    def preemption_may_find_victims(self, pod: Pod, failure: FastFailure) -> bool:
        """Whether a node that preemption would dry-run holds a pod of lower priority (only
        then does the dry run read the cycle state the PreFilter plugins write)."""
        self._fresh()
        priority = pod_priority(pod)
        if failure.rejected_with is not None:
            # Every node was visited: its status is its index's.
            tried = self._unschedulable(failure) & (self.min_priority < priority)
            return bool(tried.any())
        for name, status in failure.diagnosis.node_to_status.items():
            if status.code is Code.Unschedulable and self.min_priority[self.index[name]] < priority:
                return True
        return False

    def preemption_screen(self, pod: Pod, failure: FastFailure) -> Sequence[int] | None:
        """Of the nodes a failure rejected as Unschedulable (``unschedulable_positions``), the
        indices in that list of those preemption's dry run could make candidates; None when
        this path cannot tell.

        A node passes when it holds a pod of lower priority, every node-only filter passes
        there, and NodeResourcesFit passes with every pod of lower priority gone and the
        nominated pods of at least the pod's priority counted in. NOTE: a necessary
        condition, not a sufficient one: those filters' verdicts do not depend on the other
        filters, and the dry run fails a node where any of them fails with every potential
        victim removed (SelectVictimsOnNode). The Evaluator dry-runs the nodes passing it
        and, when none becomes a candidate, every node (for the statuses).
        """
        if failure.rejected_with is None or not self.accepts(pod):
            return None
        self._fresh()
        sig = self._signature(pod)
        if sig is None:
            return None
        static = sig.static
        fit_filters = self.fwk.filter_plugins
        if _FIT_NAME in static.skip_filters or all(pl.name != _FIT_NAME for pl in fit_filters):
            return None
        priority = pod_priority(pod)
        unschedulable = self._unschedulable(failure)
        if len(unschedulable) != len(self.names):
            return None
        may = unschedulable & (self.min_priority < priority)
        for name, arr in static.filter_status.items():
            if static.rejects[name]:
                may &= arr == 0
        cpu, mem, eph, pods = self._nominated_requests(pod)
        free_cpu = self.free_cpu - cpu
        free_mem = self.free_mem - mem
        free_eph = self.free_eph - eph
        free_pods = self.free_pods - pods
        for p, level in self._bound.items():
            if p < priority:
                free_cpu += level.cpu
                free_mem += level.mem
                free_eph += level.eph
                free_pods += level.pods
        may &= self._fit_bits(static, free_cpu, free_mem, free_eph, free_pods) == 0
        screened: list[int] = np.flatnonzero(may[unschedulable]).tolist()
        return screened

    def seed_state(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> None:
        """Write into a decision's cycle state what the PreFilter plugins that skip for every
        pod this path takes (``_SEEDING_FILTERS``) write before skipping, for the points that
        read it after this path decided (PostFilter, Reserve, PreBind): the reference PreFilter
        would have written the same. The dynamic plugins' state is only needed by preemption's
        dry run, which runs the reference PreFilter itself.

        NOTE: relies on those plugins skipping for every accepted pod (``_build_static``
        declines the pod otherwise), so that running them alone equals running them all.
        """
        for pl in self._seeding:
            _, status = pl.pre_filter(state, pod, nodes)
            if status.is_skip:
                state.skip_filter_plugins.add(pl.name)

    # ------------------------------------------------------------------ one decision

    def try_schedule(
        self,
        pod: Pod,
        algorithm: SchedulingAlgorithm,
        *,
        detail: bool = True,
        overrides: Mapping[str, Status] | None = None,
        prior: Mapping[str, Status] | None = None,
        count_nominated: bool = False,
    ) -> FastResult | FastFailure | None:
        """The reference cycle's outcome, or None where this path does not apply.

        ``overrides`` are the statuses of the nodes that hold nominated pods of at least the
        pod's priority, as the reference RunFilterPluginsWithNominatedPods gave them (the
        vectors count bound pods only); ``prior`` is the status of the pod's own nominated node
        when it was tried alone first and failed (the reference diagnosis keeps it).
        ``count_nominated`` (where ``counts_nominated`` allows it) filters with the nominated
        pods of at least the pod's priority counted on their nodes, as the reference's first
        pass does; where that passes, the second pass, without them, passes too.
        """
        if not self.accepts(pod):
            return None
        self._sums_memo.clear()
        self._follow_namespaces()
        sig = self._signature(pod)
        if sig is None:
            return None
        n = len(self.names)
        nominated = self._nominated_requests(pod) if count_nominated else None
        rejected_with = self._filter(pod, sig, nominated)
        if overrides:
            for name, status in overrides.items():
                rejected_with[self.index[name]] = self._intern(status)
        start = algorithm.next_start_node_index % n
        order = self._double_order[start : start + n]
        feasible = np.flatnonzero(rejected_with == 0)  # in index order
        names = self.names
        table = self._status_table
        if len(feasible) == 0:
            # Every node was visited: the search starts where this one did.
            algorithm.next_start_node_index = start
            diagnosis = Diagnosis()
            for status in (prior or {}).values():
                diagnosis.add_plugin_status(status)
            by_node = _VectorStatuses(names, self.index, order, rejected_with, table)
            diagnosis.node_to_status = cast(dict[str, Status], by_node)  # read only from here
            for index in by_node.distinct():
                diagnosis.add_plugin_status(table[index])
            return FastFailure(diagnosis, rejected_with)
        to_find = num_feasible_nodes_to_find(algorithm.percentage_for(self.fwk), n)
        # The first ``to_find`` feasible nodes in visiting order (from ``start`` round the
        # nodes): those from ``start`` on, then those before it.
        split = int(np.searchsorted(feasible, start))
        take = feasible[split : split + to_find]
        if len(take) < to_find:
            take = np.concatenate((take, feasible[: min(split, to_find - len(take))]))
        # A node's place in the visiting order is its index less ``start``, modulo n.
        visited = (int(take[to_find - 1]) - start) % n + 1 if len(feasible) >= to_find else n
        algorithm.next_start_node_index = (start + visited) % n
        # Names are built only for reports; decisions work on indices.
        take_names = list(map(names.__getitem__, take.tolist())) if detail else []
        rejected: dict[str, list[str]] = {}
        if detail:
            rejected = {name: format_reasons(status) for name, status in (prior or {}).items()}
            seen = order[:visited]
            seen = seen[rejected_with[seen] != 0]
            codes = rejected_with[seen]
            if len(codes):  # the table filled up to the largest status seen, then indexed
                self._formatted(int(codes.max()))
            rejected.update(
                zip(
                    map(names.__getitem__, seen.tolist()),
                    map(self._formatted_table.__getitem__, codes.tolist()),
                    strict=True,
                )
            )
        if len(take) == 1:
            return FastResult(names[int(take[0])], take_names, rejected)
        totals, per_plugin = self._scores(pod, sig, take)
        best = totals.max()
        host = algorithm.choose(_Names(names, take[totals == best]))
        result = FastResult(host, take_names, rejected)
        if detail:
            result.totals = dict(zip(take_names, totals.tolist(), strict=True))
            plugins = list(per_plugin)
            columns = [v.tolist() for v in per_plugin.values()]
            # Rows built by map() over zip(): no Python frame per node (columns are all
            # len(take) long).
            rows = map(dict, map(zip, itertools.repeat(plugins), zip(*columns, strict=True)))
            result.plugin_scores = dict(zip(take_names, rows, strict=True))
        return result

    def _formatted(self, index: int) -> list[str]:
        """A status's reasons as reports show them (shared: never mutated)."""
        while len(self._formatted_table) <= index:
            status = self._status_table[len(self._formatted_table)]
            self._formatted_table.append(format_reasons(status))
        return self._formatted_table[index]

    # ------------------------------------------------------------------ filters

    def _filter(
        self, pod: Pod, sig: _Signature, nominated: tuple[I64, I64, I64, I64] | None = None
    ) -> I32:
        """Per node, the index of the status its first failing filter returns (0: feasible).

        Upstream: RunFilterPlugins (framework.go, v1.35), over every node at once.
        """
        # None: every node passes so far (most filters pass everywhere for most pods).
        first: I32 | None = None
        static = sig.static
        for pl in self.fwk.filter_plugins:
            name = pl.name
            if name in static.skip_filters:
                continue
            status: I32 | None
            if name in static.filter_status:
                status = static.filter_status[name] if static.rejects[name] else None
            elif name == "NodeResourcesFit":
                status = self._fit_filter(static, nominated)
            elif name == "PodTopologySpread":
                status = self._spread_filter(pod, sig)
            elif name == _IPA:
                status = self._ipa_filter(pod, static)
            else:
                continue  # a skipping filter (its PreFilter skipped)
            if status is None:
                continue
            first = status if first is None else np.where(first == 0, status, first)
        if first is None:
            return np.zeros(len(self.names), np.int32)
        # A fresh array: callers write overrides into it, and static rows must not change.
        return first.copy() if any(first is a for a in static.filter_status.values()) else first

    def _fit_filter(
        self, static: _Static, nominated: tuple[I64, I64, I64, I64] | None = None
    ) -> I32 | None:
        """Upstream: Fit.Filter / fitsRequest (fit.go, v1.35); ``nominated``: requests that
        nominated pods hold on each node, taken off the free room. None: every node fits."""
        if nominated is None:
            bits = self._per_node(static, _FIT)
        else:
            bits = self._fit_bits(
                static,
                self.free_cpu - nominated[0],
                self.free_mem - nominated[1],
                self.free_eph - nominated[2],
                self.free_pods - nominated[3],
            )
        if not bits.any():
            return None
        status: I32 = self._fit_table[bits]
        return status

    def _fit_bits(self, static: _Static, free_cpu: I64, free_mem: I64, free_eph: I64,
                  free_pods: I64) -> I32:  # fmt: skip
        """Per node, what the pod is short of as ``_FIT_REASONS`` bits (0: it fits), with
        ``_FIT_UNRESOLVABLE`` where a request exceeds the node's allocatable."""
        bits = (free_pods < 1).astype(np.int32)
        for bit, req, free, alloc in (
            (2, static.req_cpu, free_cpu, self.alloc_cpu),
            (4, static.req_mem, free_mem, self.alloc_mem),
            (8, static.req_eph, free_eph, self.alloc_eph),
        ):
            if req > 0:
                short = free < req
                bits |= np.where(short, bit, 0).astype(np.int32)
                bits |= np.where(short & (alloc < req), _FIT_UNRESOLVABLE, 0).astype(np.int32)
        return bits

    def _fit_row(self, static: _Static, i: int) -> int:
        """``_fit_bits`` for one node, from its free room as it stands."""
        bits = 1 if self.free_pods[i] < 1 else 0
        for bit, req, free, alloc in (
            (2, static.req_cpu, self.free_cpu[i], self.alloc_cpu[i]),
            (4, static.req_mem, self.free_mem[i], self.alloc_mem[i]),
            (8, static.req_eph, self.free_eph[i], self.alloc_eph[i]),
        ):
            if req > 0 and int(free) < req:
                bits |= bit
                if int(alloc) < req:
                    bits |= _FIT_UNRESOLVABLE
        return bits

    def _spread_filter(self, pod: Pod, sig: _Signature) -> I32 | None:
        """Upstream: PodTopologySpread.Filter (filtering.go, v1.35), constraint by constraint.
        None: every node passes (no hard constraint, or none rejects)."""
        status: I32 | None = None
        undecided: B | None = None  # None: every node
        for c, counter, domains in sig.hard:
            if len(domains) < c.min_domains:
                min_match = 0
            elif len(domains):
                min_match = int(counter.counts[domains].min())
            else:
                min_match = _MAX_INT32
            self_match = 1 if c.selector.matches(pod.metadata.labels) else 0
            has = counter.has
            if not has.all():
                missing = ~has if undecided is None else undecided & ~has
                if missing.any():
                    if status is None:
                        status = np.zeros(len(self.names), np.int32)
                    status[missing] = self._spread_missing
                undecided = has if undecided is None else undecided & has
            # Past the skew is a domain's matter: the domains first, then their nodes.
            over_domain = counter.counts > c.max_skew - self_match + min_match
            if not over_domain.any():
                continue
            over = over_domain[counter.safe_codes]
            if undecided is not None:
                over &= undecided
            if over.any():
                if status is None:
                    status = np.zeros(len(self.names), np.int32)
                status[over] = self._spread_skew
                undecided = ~over if undecided is None else undecided & ~over
        return status

    def _ipa_filter(self, pod: Pod, static: _Static) -> I32 | None:
        """Upstream: InterPodAffinity.Filter (filtering.go, v1.35): the pod's required
        affinity, its required anti-affinity, then existing pods' required anti-affinity.
        None: no required term on either side, so every node passes."""
        n = len(self.names)
        terms = static.terms
        if (
            not terms.required_affinity_terms
            and not terms.required_anti_affinity_terms
            and not any(k == _REQUIRED_ANTI_AFFINITY for k, *_ in self._carried_matching_pod(pod))
        ):
            return None
        ns = self._namespace_labels()
        affinity_fails = np.zeros(n, np.bool_)
        if terms.required_affinity_terms:
            required = terms.required_affinity_terms
            matching = self._counts_of(
                ("all", required),
                functools.partial(_all_terms_match, required, ns),
            )
            has_all = np.ones(n, np.bool_)
            exist = np.ones(n, np.bool_)
            any_counted = False
            for t in required:
                has, at, total = self._domain_sums(t.topology_key, matching)
                has_all &= has
                exist &= at > 0
                any_counted = any_counted or total > 0
            ok = exist
            if not any_counted and pod_matches_all_affinity_terms(required, pod, ns):
                ok = np.ones(n, np.bool_)  # the first pod of a group that selects itself
            affinity_fails = ~(has_all & ok)
        anti_fails = np.zeros(n, np.bool_)
        for t in terms.required_anti_affinity_terms:
            counts = self._counts_of(("term", t), _matcher(t, ns))
            anti_fails |= self._domain_sums(t.topology_key, counts)[1] > 0
        existing_fails = np.zeros(n, np.bool_)
        for kind, term, _, carriers in self._carried_matching_pod(pod):
            if kind == _REQUIRED_ANTI_AFFINITY:
                existing_fails |= self._domain_sums(term.topology_key, carriers)[1] > 0
        status = np.where(existing_fails, self._ipa_existing, 0).astype(np.int32)
        status = np.where(anti_fails, self._ipa_anti, status).astype(np.int32)
        status = np.where(affinity_fails, self._ipa_affinity, status).astype(np.int32)
        return status

    def _domain_sums(self, key: str, per_node: I64) -> tuple[B, I64, int]:
        """For each node: whether it has ``key``, and the sum of ``per_node`` over its domain
        (0 without the key); and the sum over every node that has the key."""
        memo_key = (key, id(per_node))
        found = self._sums_memo.get(memo_key)
        if found is not None and found[0] is per_node:
            return found[1]  # one attempt's Filter and Score sum the same counts
        codes, values = self.codes(key)
        has = codes >= 0
        out: tuple[B, I64, int]
        if not values:
            out = has, np.zeros(len(codes), np.int64), 0
        elif self._one_node_per_value(key):
            # NOTE: each domain is one node (hostname): its sum is the node's own count.
            at: I64 = np.where(has, per_node, 0)
            out = has, at, int(at.sum())
        elif self._all_have(key):
            sums = np.bincount(codes, weights=per_node, minlength=len(values))
            sums_int = sums.astype(np.int64)  # exact: counts are far below 2**53
            out = has, sums_int[codes], int(sums_int.sum())
        else:
            sums = np.bincount(codes[has], weights=per_node[has], minlength=len(values))
            sums_int = sums.astype(np.int64)
            at = np.where(has, sums_int[np.where(has, codes, 0)], 0)
            out = has, at, int(sums_int.sum())
        self._sums_memo[memo_key] = (per_node, out)
        return out

    def _all_have(self, key: str) -> bool:
        every = self._every_node_has.get(key)
        if every is None:
            every = self._every_node_has[key] = bool((self.codes(key)[0] >= 0).all())
        return every

    def _one_node_per_value(self, key: str) -> bool:
        single = self._single_valued.get(key)
        if single is None:
            codes, values = self.codes(key)
            single = self._single_valued[key] = len(values) == int((codes >= 0).sum())
        return single

    def _counts_of(self, key: Any, match: Callable[[Pod], bool]) -> I64:
        """Per node, the bound pods ``match`` holds for; counted once, then kept current."""
        pc = self._pod_counts.get(key)
        if pc is None:
            pc = self._pod_counts[key] = _PodCounts(match, len(self.names))
            for i, info in enumerate(self.cluster.list()):
                pc.per_node[i] = sum(1 for p in info.pods if match(p))
        return pc.per_node

    def _carried_matching_pod(self, pod: Pod) -> list[tuple[int, AffinityTerm, int, I64]]:
        """The terms existing pods carry that select the incoming pod, with their carriers."""
        if pod is self._last_carried[0]:
            return self._last_carried[1]  # Filter and Score of one attempt ask alike
        meta = pod.metadata
        key = (meta.namespace, tuple(sorted(meta.labels.items())))
        found = self._carried_matching.get(key)
        if found is None:
            ns = self._namespace_labels()
            found = [
                (kind, term, weight, row)
                for (kind, term, weight), row in self._carried.items()
                if term.matches(pod, ns)
            ]
            if len(self._carried_matching) > 4096:
                self._carried_matching.clear()
            self._carried_matching[key] = found
        self._last_carried = (pod, found)
        return found

    def _namespace_labels(self) -> NamespaceLabels:
        assert self._ipa is not None
        return self._ipa.namespace_labels()

    def _follow_namespaces(self) -> None:
        """Drop what was counted with namespace labels that have since changed."""
        objects = self.cluster.objects
        if objects is self._objects:
            return
        self._objects = objects
        namespaces = [(ns.metadata.name, ns.metadata.labels) for ns in objects.namespaces()]
        if namespaces != self._namespaces:
            self._namespaces = namespaces
            self._pod_counts.clear()
            self._carried_matching.clear()
            self._last_carried = (None, [])

    # ------------------------------------------------------------------ scores

    def _scores(
        self, pod: Pod, sig: _Signature, take: npt.NDArray[np.intp]
    ) -> tuple[I64, dict[str, I64]]:
        per_plugin: dict[str, I64] = {}
        total = np.zeros(len(take), np.int64)
        for pl in self.fwk.score_plugins:
            name = pl.name
            if name in sig.skipped_scores:
                continue
            if name in _STATIC_SCORES:
                static = sig.static
                zero = static.all_zero.get(name)
                if zero is None:
                    zero = static.all_zero[name] = not static.static_scores[name].any()
                if zero:  # DefaultNormalizeScore of zeros: MaxNodeScore reversed, else zeros
                    reverse = _NORMALIZED_STATIC.get(name, False)
                    raw = np.full(len(take), MAX_NODE_SCORE if reverse else 0, np.int64)
                else:
                    raw = static.static_scores[name][take]
                    if name in _NORMALIZED_STATIC:
                        raw = default_normalize_score_array(
                            MAX_NODE_SCORE, _NORMALIZED_STATIC[name], raw
                        )
            elif name == "NodeResourcesFit":
                raw = self._least_allocated(sig.static, take)
            elif name == "NodeResourcesBalancedAllocation":
                raw = self._balanced(sig.static, take)
            elif name == _IPA:
                ipa = self._ipa_scores(pod, sig.static, take)
                if ipa is None:
                    continue  # PreScore skipped: nothing to score
                raw = ipa
            else:  # PodTopologySpread
                raw = self._spread_scores(sig, take)
            weight = self.fwk.score_plugin_weight[name]
            weighted = raw if weight == 1 else raw * weight
            per_plugin[name] = weighted
            total += weighted
        return total, per_plugin

    def _least_allocated(self, static: _Static, take: npt.NDArray[np.intp]) -> I64:
        if self._all_alloc:
            scores: I64 = self._per_node(static, _LEAST)[take]
            return scores
        return self._least_allocated_at(static, take)

    def _balanced(self, static: _Static, take: npt.NDArray[np.intp]) -> I64:
        scores: I64 = self._per_node(static, _BALANCED)[take]
        return scores

    def _per_node(self, static: _Static, kind: str) -> npt.NDArray[Any]:
        """A shape's values on every node that read only the nodes' resources — ``_LEAST``
        (LeastAllocated's scores, every node having allocatable cpu and memory),
        ``_BALANCED`` (BalancedAllocation's), ``_FIT`` (NodeResourcesFit's shortage bits) —
        kept between decisions: the rows changed since (a bind changes one) are recomputed
        one by one with the same arithmetic, in Python, and many changed rows recompute the
        whole vector. tests/test_fastpath.py checks the kept values against fresh ones."""
        log = self._changed_rows
        values, at = static.kept.get(kind, (None, 0))
        if values is None or len(log) - at > _REPLAYED_ROWS:
            every = self._double_order[: len(self.names)]  # 0..n-1
            if kind == _LEAST:
                values = self._least_allocated_at(static, every)
            elif kind == _BALANCED:
                values = self._balanced_at(static, every)
            else:
                values = self._fit_bits(static, self.free_cpu, self.free_mem, self.free_eph,
                                        self.free_pods)  # fmt: skip
        else:
            row = {_LEAST: self._least_row, _BALANCED: self._balanced_row}.get(kind, self._fit_row)
            for i in set(log[at:]):
                values[i] = row(static, i)
        static.kept[kind] = (values, len(log))
        if len(log) > _CHANGED_ROWS_KEPT:
            self._forget_changed_rows()
        return values

    def _forget_changed_rows(self) -> None:
        """Start the log again; every shape's kept values are computed afresh on next use."""
        self._changed_rows = []
        for static in self._statics.values():
            if isinstance(static, _Static):
                static.kept.clear()

    def _least_row(self, static: _Static, i: int) -> int:
        """``_least_allocated_at`` for one node (every node has allocatable cpu and memory)."""
        fit: Any = self.fwk.plugins["NodeResourcesFit"]
        w_cpu, w_mem = (int(r.weight) for r in fit.scorer.resources)
        total = 0
        for alloc, used, req, w in (
            (int(self.alloc_cpu[i]), int(self.nz_cpu[i]), static.score_req[0], w_cpu),
            (int(self.alloc_mem[i]), int(self.nz_mem[i]), static.score_req[1], w_mem),
        ):
            free = alloc - (used + req)
            total += (0 if free < 0 else free * MAX_NODE_SCORE // alloc) * w
        return total // (w_cpu + w_mem)

    def _balanced_row(self, static: _Static, i: int) -> int:
        """``_balanced_at`` for one node."""
        assert static.balanced_req is not None
        fractions: list[float] = []
        present: list[bool] = []
        for alloc, used, req in (
            (int(self.alloc_cpu[i]), int(self.req_cpu[i]), static.balanced_req[0]),
            (int(self.alloc_mem[i]), int(self.req_mem[i]), static.balanced_req[1]),
        ):
            has = alloc != 0
            fraction = float(used + req) / float(alloc if has else 1)
            fractions.append(min(fraction, 1.0))
            present.append(has)
        std = abs((fractions[0] - fractions[1]) / 2) if present[0] and present[1] else 0.0
        return int((1 - std) * float(MAX_NODE_SCORE))

    def _least_allocated_at(self, static: _Static, take: npt.NDArray[np.intp]) -> I64:
        fit: Any = self.fwk.plugins["NodeResourcesFit"]
        weights = [r.weight for r in fit.scorer.resources]
        score = np.zeros(len(take), np.int64)
        weight_sum = np.zeros(len(take), np.int64)
        if self._all_alloc:
            total = np.zeros(len(take), np.int64)
            for alloc, used, req, w in (
                (self.alloc_cpu[take], self.nz_cpu[take], static.score_req[0], weights[0]),
                (self.alloc_mem[take], self.nz_mem[take], static.score_req[1], weights[1]),
            ):
                free = alloc - (used + req)
                total += np.where(free < 0, 0, free * MAX_NODE_SCORE // alloc) * w
            mean: I64 = total // (weights[0] + weights[1])
            return mean
        for alloc, used, req, w in (
            (self.alloc_cpu[take], self.nz_cpu[take], static.score_req[0], weights[0]),
            (self.alloc_mem[take], self.nz_mem[take], static.score_req[1], weights[1]),
        ):
            requested = used + req
            has = alloc != 0
            safe = np.where(has, alloc, 1)
            s = np.where(requested > alloc, 0, (alloc - requested) * MAX_NODE_SCORE // safe)
            score += np.where(has, s * w, 0)
            weight_sum += np.where(has, w, 0)
        return np.where(weight_sum == 0, 0, score // np.where(weight_sum == 0, 1, weight_sum))

    def _balanced_at(self, static: _Static, take: npt.NDArray[np.intp]) -> I64:
        assert static.balanced_req is not None
        fractions = []
        present = []
        for alloc, used, req in (
            (self.alloc_cpu[take], self.req_cpu[take], static.balanced_req[0]),
            (self.alloc_mem[take], self.req_mem[take], static.balanced_req[1]),
        ):
            has = alloc != 0
            f = (used + req).astype(np.float64) / np.where(has, alloc, 1).astype(np.float64)
            fractions.append(np.minimum(f, 1.0))
            present.append(has)
        both = present[0] & present[1]
        std = np.where(both, np.abs((fractions[0] - fractions[1]) / 2), 0.0)
        return ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)

    def _ipa_scores(self, pod: Pod, static: _Static, take: npt.NDArray[np.intp]) -> I64 | None:
        """InterPodAffinity's normalized scores, or None when its PreScore skips.

        The weights PreScore accumulates per topology pair are, per term, a weight times the
        pods counted in the pair's domain: the incoming pod's preferred terms against existing
        pods, and existing pods' required affinity (the hard weight) and preferred terms
        against the incoming pod.
        Upstream: InterPodAffinity.PreScore, Score, NormalizeScore (scoring.go, v1.35)
        """
        assert self._ipa is not None
        args = self._ipa.args
        if args.ignore_preferred_terms_of_existing_pods and not static.has_preferred_terms:
            return None
        ns = self._namespace_labels()
        terms = static.terms
        contributions: list[tuple[str, int, I64]] = []
        for sign, preferred in (
            (1, terms.preferred_affinity_terms),
            (-1, terms.preferred_anti_affinity_terms),
        ):
            for wt in preferred:
                t = wt.term
                counts = self._counts_of(("term", t), _matcher(t, ns))
                contributions.append((t.topology_key, sign * wt.weight, counts))
        hard_weight = args.weight
        for kind, term, weight, carriers in self._carried_matching_pod(pod):
            if kind == _REQUIRED_AFFINITY and hard_weight > 0:
                contributions.append((term.topology_key, hard_weight, carriers))
            elif kind == _PREFERRED_AFFINITY:
                contributions.append((term.topology_key, weight, carriers))
            elif kind == _PREFERRED_ANTI_AFFINITY:
                contributions.append((term.topology_key, -weight, carriers))
        if not contributions:
            return None  # no pair can be counted: PreScore skips
        raw = np.zeros(len(take), np.int64)
        counted = False
        for key, weight, per_node in contributions:
            _, at, total = self._domain_sums(key, per_node)
            if total:
                counted = True
                raw += weight * at[take]
        if not counted:
            return None  # no pair was counted: PreScore skips
        lo, hi = int(raw.min()), int(raw.max())
        diff = hi - lo
        if diff <= 0:
            return np.zeros(len(take), np.int64)
        scaled = float(MAX_NODE_SCORE) * ((raw - lo).astype(np.float64) / float(diff))
        return scaled.astype(np.int64)  # truncation toward zero, as Go's int64(float64)

    def _spread_scores(self, sig: _Signature, take: npt.NDArray[np.intp]) -> I64:
        """Upstream: PodTopologySpread.Score and NormalizeScore (scoring.go, v1.35), over the
        nodes ``take`` at once. ``ignored``: the nodes lacking a soft constraint's key (None:
        there are none, and the masks are skipped)."""
        ignored: B | None = None
        if sig.soft_require_all:
            ignored = ~sig.soft_eligible_all[take]
            if not ignored.any():
                ignored = None
        kept = len(take) if ignored is None else len(take) - int(np.count_nonzero(ignored))
        raw = np.zeros(len(take), np.float64)
        for c, counter in sig.soft:
            if c.topology_key == LABEL_HOSTNAME:
                size = kept
                counts = self._node_counts(sig, c)[take]
                has = None if self._all_have(LABEL_HOSTNAME) else self.codes(LABEL_HOSTNAME)[0]
            else:
                assert counter is not None
                codes = counter.codes[take]
                # The distinct values among the kept nodes (a missing key, -1, is one too).
                present = np.bincount((codes if ignored is None else codes[~ignored]) + 1)
                size = int(np.count_nonzero(present))
                if self._all_have(c.topology_key):
                    has = None
                    counts = counter.counts[codes]
                else:
                    has = counter.codes
                    counts = np.where(codes >= 0, counter.counts[np.where(codes >= 0, codes, 0)], 0)
            weight = topology_normalizing_weight(size)
            if has is None:
                raw += counts * weight + float(c.max_skew - 1)
            else:
                raw += np.where(has[take] >= 0, counts * weight + float(c.max_skew - 1), 0.0)
        scores = go_round_array(raw)
        if ignored is not None:
            scores[ignored] = -1
        valid = scores if ignored is None else scores[~ignored]
        if len(valid) == 0:  # every node ignored
            return np.zeros(len(take), np.int64)
        lo, hi = int(valid.min()), int(valid.max())
        if hi == 0:
            if ignored is None:
                return np.full(len(take), MAX_NODE_SCORE, np.int64)
            return np.where(ignored, 0, MAX_NODE_SCORE).astype(np.int64)
        # Every score lies in [lo, hi] (the ignored ones at -1) and lo >= 0: the numerators
        # are never negative, and Go's truncating division is the floor division.
        out: I64 = (MAX_NODE_SCORE * (hi + lo - scores) // hi).astype(np.int64)
        if ignored is None:
            return out
        return np.where(ignored, 0, out).astype(np.int64)

    def _node_counts(self, sig: _Signature, c: InternalConstraint) -> I64:
        """Matching pods per node for a hostname constraint (Score counts every node)."""
        for counter in sig.host_counters:
            if counter.selector == c.selector:
                return counter.counts
        raise AssertionError("hostname counter missing")

    # ------------------------------------------------------------------ signatures

    def _signature(self, pod: Pod) -> _Signature | None:
        key = _static_key(pod)
        static = self._statics.get(key, _MISSING)
        if static is _MISSING:
            static = self._statics[key] = self._build_static(pod)
        if static is None:
            return None
        assert isinstance(static, _Static)
        constraints = self._constraints(pod)
        if constraints is _MISSING:
            return None  # a selector does not parse: the reference reports it
        sig_key = (key, constraints)
        sig = self._signatures.get(sig_key, _MISSING)
        if sig is _MISSING:
            sig = self._signatures[sig_key] = self._build_signature(pod, static, constraints)
        assert sig is None or isinstance(sig, _Signature)
        return sig

    def _constraints(self, pod: Pod) -> Any:
        """The pod's hard and soft spread constraints as PodTopologySpread resolves them, and
        whether they are its own; None without the plugin, _MISSING when one does not parse.

        NOTE: memoised by what getConstraints reads — the pod's namespace, labels, owners and
        constraints — for as long as the object lister (default constraints' Services and
        controllers) stays the same object.
        """
        spread = self.fwk.plugins.get("PodTopologySpread")
        if not isinstance(spread, PodTopologySpread):
            return None
        objects = self.cluster.objects
        if objects is not self._constraints_objects:
            self._constraints_objects = objects
            self._constraints_memo.clear()
        meta = pod.metadata
        memo_key = _KEY_ENCODER.encode(
            (
                meta.namespace,
                meta.labels,
                meta.owner_references,
                pod.spec.topology_spread_constraints,
            )
        )
        found = self._constraints_memo.get(memo_key, _MISSING)
        if found is not _MISSING:
            return found
        try:
            found = (
                tuple(spread.get_constraints(pod, DO_NOT_SCHEDULE)),
                tuple(spread.get_constraints(pod, SCHEDULE_ANYWAY)),
                bool(pod.spec.topology_spread_constraints),
            )
        except SelectorError:
            found = _MISSING
        if len(self._constraints_memo) > 65536:
            self._constraints_memo.clear()
        self._constraints_memo[memo_key] = found
        return found

    def _build_static(self, pod: Pod) -> _Static | None:
        fwk = self.fwk
        infos = self.cluster.list()
        n = len(infos)
        state = CycleState()
        for pre in fwk.pre_filter_plugins:
            if pre.name in _DYNAMIC_FILTERS:
                continue
            result, status = pre.pre_filter(state, pod, infos)
            if status.is_skip:
                state.skip_filter_plugins.add(pre.name)
                continue
            if not status.is_success or (result is not None and result.node_names is not None):
                return None
            if pre.name in _SKIPPING_FILTERS:
                return None  # a plugin this path cannot evaluate is in play
        filter_status: dict[str, I32] = {}
        for flt in fwk.filter_plugins:
            if flt.name not in NODE_ONLY_FILTERS or flt.name in state.skip_filter_plugins:
                continue
            arr = np.zeros(n, np.int32)
            for i, info in enumerate(infos):
                status = flt.filter(state, pod, info)
                if not status.is_success:
                    if not status.is_rejected:
                        return None  # an error: the reference reports it
                    arr[i] = self._intern(status.with_plugin(flt.name))
            filter_status[flt.name] = arr
        static_scores: dict[str, I64] = {}
        skipped: set[str] = set()
        for prs in fwk.pre_score_plugins:
            if prs.name not in _STATIC_SCORES:
                continue
            status = prs.pre_score(state, pod, infos)
            if status.is_skip:
                skipped.add(prs.name)
            elif not status.is_success:
                return None
        for scr in fwk.score_plugins:
            if scr.name in _STATIC_SCORES and scr.name not in skipped:
                scores = np.zeros(n, np.int64)
                for i, info in enumerate(infos):
                    score, status = scr.score(state, pod, info)
                    if not status.is_success:
                        return None
                    scores[i] = score
                static_scores[scr.name] = scores
        r = calculate_resource(pod, self.features)
        if r.resource.scalar_resources:
            return None
        fit: Any = fwk.plugins.get("NodeResourcesFit")
        score_req = (0, 0)
        request = (0, 0, 0)
        if fit is not None:
            reqs = fit.scorer.calculate_pod_resource_request_list(pod)
            score_req = (reqs[0], reqs[1])
            if not fit.pre_filter(CycleState(), pod, infos)[1].is_success:
                return None
            req = compute_pod_resource_request(pod, fit.enable_pod_level_resources)
            request = (req.milli_cpu, req.memory, req.ephemeral_storage)
        balanced_req: tuple[int, int] | None = None
        balanced: Any = fwk.plugins.get("NodeResourcesBalancedAllocation")
        if balanced is not None:
            reqs = balanced.scorer.calculate_pod_resource_request_list(pod)
            if any(reqs):
                balanced_req = (reqs[0], reqs[1])
            else:
                skipped.add("NodeResourcesBalancedAllocation")
        terms = parse_pod_affinity_terms(pod)
        if terms.parse_error:
            return None  # InterPodAffinity's PreFilter rejects it with the parse error
        skip_filters = set(state.skip_filter_plugins)
        if self._ipa is None:
            skipped.add(_IPA)
        return _Static(
            filter_status=filter_status,
            rejects={name: bool(arr.any()) for name, arr in filter_status.items()},
            skip_filters=frozenset(skip_filters),
            static_scores=static_scores,
            skipped_scores=frozenset(skipped),
            req_cpu=request[0],
            req_mem=request[1],
            req_eph=request[2],
            score_req=score_req,
            balanced_req=balanced_req,
            terms=terms,
            has_preferred_terms=has_preferred_constraints(pod),
            pod=pod,
            state=state,
        )

    def _build_signature(self, pod: Pod, static: _Static, constraints: Any) -> _Signature | None:
        n = len(self.names)
        skipped = set(static.skipped_scores)
        hard: list[tuple[InternalConstraint, _Counter, I64]] = []
        soft: list[tuple[InternalConstraint, _Counter | None]] = []
        soft_require_all = True
        soft_all = np.ones(n, np.bool_)
        host_counters: list[_Counter] = []
        spread = self.fwk.plugins.get("PodTopologySpread")
        if isinstance(spread, PodTopologySpread) and constraints is not None:
            hard_cs, soft_cs, own = constraints
            if not self.features.enable_node_inclusion_policy_in_pod_topology_spread:
                return None
            required = get_required_node_affinity(pod)
            hard_all = self._has_all(hard_cs)
            for c in hard_cs:
                eligible = hard_all & self._policy_mask(c, pod, required)
                counter = self._counter(c, pod.metadata.namespace, eligible)
                domains = np.unique(counter.codes[eligible & (counter.codes >= 0)])
                hard.append((c, counter, domains.astype(np.int64)))
            if not soft_cs:
                skipped.add("PodTopologySpread")
            else:
                soft_require_all = own or not spread.system_defaulted
                soft_all = self._has_all(soft_cs)
                if not soft_require_all and not soft_all.all():
                    return None  # nodes without a key form a "" domain: left to the reference
                for c in soft_cs:
                    base = soft_all if soft_require_all else np.ones(n, np.bool_)
                    eligible = base & self._policy_mask(c, pod, required)
                    if c.topology_key == LABEL_HOSTNAME:
                        host_counters.append(
                            self._counter(
                                c, pod.metadata.namespace, np.ones(n, np.bool_), per_node=True
                            )
                        )
                        soft.append((c, None))
                    else:
                        soft.append((c, self._counter(c, pod.metadata.namespace, eligible)))
        else:
            skipped.add("PodTopologySpread")
        return _Signature(
            static=static,
            hard=hard,
            soft=soft,
            soft_require_all=soft_require_all,
            soft_eligible_all=soft_all,
            skipped_scores=frozenset(skipped),
            host_counters=host_counters,
        )

    def _has_all(self, constraints: Sequence[InternalConstraint]) -> B:
        mask = np.ones(len(self.names), np.bool_)
        for c in constraints:
            mask &= self.codes(c.topology_key)[0] >= 0
        return mask

    def _policy_mask(self, c: InternalConstraint, pod: Pod, required: Any) -> B:
        infos = self.cluster.list()
        comparison = self.features.enable_taint_toleration_comparison_operators
        return np.fromiter(
            (
                c.match_node_inclusion_policies(
                    pod, info.node, required, enable_comparison_operators=comparison
                )
                for info in infos
            ),
            np.bool_,
            len(infos),
        )

    def _counter(
        self, c: InternalConstraint, namespace: str, eligible: B, *, per_node: bool = False
    ) -> _Counter:
        if per_node:
            codes = np.arange(len(self.names), dtype=np.int32)
            n_domains = len(self.names)
        else:
            codes, values = self.codes(c.topology_key)
            n_domains = len(values)
        for existing in self._counters:
            if (
                existing.selector == c.selector
                and existing.namespace == namespace
                and existing.codes is codes
                and np.array_equal(existing.eligible, eligible)
            ):
                return existing
        counter = _Counter(c, namespace, codes, eligible, n_domains)
        matching = self._matching_of(namespace, c.selector)
        counted = eligible & counter.has
        counter.counts[:] = np.bincount(
            codes[counted], weights=matching.per_node[counted], minlength=len(counter.counts)
        ).astype(np.int64)
        self._counters.append(counter)
        matching.counters.append(counter)
        return counter

    def _matching_of(self, namespace: str, selector: Selector) -> _Matching:
        """The selector's pods per node in the namespace: counted once (one walk over the
        pods), then kept current on every bind and over rebuilds."""
        by_selector = self._matching.setdefault(namespace, {})
        matching = by_selector.get(selector)
        if matching is None:
            per_node = np.zeros(len(self.names), np.int64)
            if not selector.empty:
                for i, info in enumerate(self.cluster.list()):
                    per_node[i] = sum(
                        1 for p in info.pods if _spread_counts(p, namespace, selector)
                    )
            matching = by_selector[selector] = _Matching(per_node)
            self._matched_by_labels.clear()  # a new selector: every label set's list is stale
        return matching


_MISSING: Final[Any] = object()


def _honours_taints(constraints: Any) -> bool:
    """Whether resolved spread constraints (hard, soft, own) count nodes by their taints."""
    if not isinstance(constraints, tuple):
        return False
    hard, soft, _ = constraints
    return any(c.node_taints_policy == NODE_INCLUSION_POLICY_HONOR for c in (*hard, *soft))


_KEY_ENCODER: Final = msgspec.json.Encoder()


def _static_key(pod: Pod) -> bytes:
    """What the static plugins and the requests read of a pod, as bytes.

    NOTE: it leaves out what no filter or score plugin reads — the pod's name, labels and
    owners (PodTopologySpread's constraints are resolved per pod and keyed separately;
    InterPodAffinity's counts are read per decision), container names, volume names (each pod
    read from a cluster has its own ``kube-api-access-<random>`` token volume), hostname and
    subdomain, scheduling gates and priority — so that the pods of one template share it —
    and its spread constraints (PodTopologySpread is a dynamic plugin here: a report's probe,
    a workload pod with one of its constraints made hard, shares its pod's shape).
    """
    spec = pod.spec
    view = msgspec.structs.replace(
        spec,
        containers=[_unnamed(c) for c in spec.containers],
        init_containers=[_unnamed(c) for c in spec.init_containers],
        volumes=[msgspec.structs.replace(v, name="") for v in spec.volumes],
        hostname="",
        subdomain="",
        scheduling_gates=[],
        topology_spread_constraints=[],
        priority=None,
        priority_class_name="",
        preemption_policy=None,
    )
    return _KEY_ENCODER.encode((pod.metadata.namespace, view))


def _matcher(term: AffinityTerm, ns: NamespaceLabels) -> Callable[[Pod], bool]:
    """Whether a pod is one the term selects (a partial, so that snapshots can pickle it)."""
    return functools.partial(_term_matches, term, ns)


def _term_matches(term: AffinityTerm, ns: NamespaceLabels, pod: Pod) -> bool:
    return term.matches(pod, ns)


def _all_terms_match(terms: Sequence[AffinityTerm], ns: NamespaceLabels, pod: Pod) -> bool:
    return pod_matches_all_affinity_terms(terms, pod, ns)


def _unnamed(c: Container) -> Container:
    return msgspec.structs.replace(c, name="") if c.name else c


class _VectorStatuses(Mapping[str, Status]):
    """A failed attempt's status of every node, read from the status vector (``codes[p]``
    indexes ``table`` for the node at position ``p``; every node was visited), iterated in
    the order the search visited them, and counted per distinct status for FitError's
    message (``status_counts``) without a dict of every node."""

    __slots__ = ("_bincount", "_codes", "_index", "_names", "_order", "_table")

    def __init__(
        self,
        names: list[str],
        index: Mapping[str, int],
        order: npt.NDArray[np.intp],
        codes: I32,
        table: list[Status],
    ) -> None:
        self._names = names
        self._index = index
        self._order = order
        self._codes = codes
        self._table = table
        self._bincount: I64 | None = None  # how many nodes have each status: taken once

    def __getitem__(self, name: str) -> Status:
        p = self._index.get(name)
        if p is None:
            raise KeyError(name)
        return self._table[int(self._codes[p])]

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def __iter__(self) -> Iterator[str]:
        names = self._names
        return (names[i] for i in self._order.tolist())

    def __len__(self) -> int:
        return len(self._order)

    def _counts(self) -> I64:
        if self._bincount is None:
            self._bincount = np.bincount(self._codes)
        return self._bincount

    def distinct(self) -> list[int]:
        """The status indexes met, in table order."""
        return [int(i) for i in np.flatnonzero(self._counts())]

    def status_counts(self) -> list[tuple[Status, int]]:
        counts = self._counts()
        return [(self._table[int(i)], int(counts[i])) for i in np.flatnonzero(counts)]


class _Names(Sequence[str]):
    """Node names at some indices, built only when asked for (usually one of them is)."""

    __slots__ = ("_indices", "_names")

    def __init__(self, names: list[str], indices: npt.NDArray[np.intp]) -> None:
        self._names = names
        self._indices = indices

    def __len__(self) -> int:
        return len(self._indices)

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        return self._names[int(self._indices[i])]


__all__ = ["FastFailure", "FastPath", "FastResult"]
