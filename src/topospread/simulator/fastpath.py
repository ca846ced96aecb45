"""A vectorised scheduling cycle for the default profile, decision for decision the reference's.

The reference path (framework/runtime.py, schedule_one.py) calls every plugin for every node, as
upstream does. This path computes the same cycle over numpy columns of the node table:

- static per pod signature (the pod without its name): the verdicts and raw scores of the
  plugins that depend only on the pod and the node (NodeUnschedulable, NodeName,
  TaintToleration, NodeAffinity, ImageLocality), taken once from the reference plugins;
- dynamic, per decision: NodeResourcesFit (filter and LeastAllocated score), BalancedAllocation,
  and PodTopologySpread, whose matching-pod counts per domain are kept incrementally on every
  bind and unbind instead of being recounted over every pod of every node;
- then upstream's sampling (nodes visited from the rotating start index until enough are
  feasible), normalisation and weights, and host selection with the same random draws.

It handles the pods and profiles it can prove equal and returns None for everything else —
pods with pod (anti-)affinity, host ports, extended resources, claims or a nomination; any
non-default plugin or scoring strategy; a cluster with nominated pods or pods with affinity
terms; and every attempt where no node fits (the reference then writes the exact
FailedScheduling message and runs preemption). tests/test_fastpath.py checks it against the
reference path on random clusters, decision for decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec
import numpy as np
import numpy.typing as npt

from topospread.api.types import (
    DO_NOT_SCHEDULE,
    LABEL_HOSTNAME,
    SCHEDULE_ANYWAY,
    Pod,
)
from topospread.cluster.state import ClusterState
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.runtime import Framework
from topospread.framework.schedule_one import SchedulingAlgorithm, num_feasible_nodes_to_find
from topospread.framework.types import MAX_NODE_SCORE
from topospread.nodeaffinity import get_required_node_affinity
from topospread.plugins.noderesources.resource_helpers import (
    allocatable_resource,
    calculate_resource,
)
from topospread.plugins.podtopologyspread.common import InternalConstraint
from topospread.plugins.podtopologyspread.plugin import PodTopologySpread

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
B = npt.NDArray[np.bool_]

_STATIC_FILTERS: Final = ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity")
_SKIPPING_FILTERS: Final = (
    "NodePorts",
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "DynamicResources",
    "InterPodAffinity",
)
_DYNAMIC_FILTERS: Final = ("NodeResourcesFit", "PodTopologySpread")
_STATIC_SCORES: Final = ("TaintToleration", "NodeAffinity", "ImageLocality")
_NORMALIZED_STATIC: Final = {"TaintToleration": True, "NodeAffinity": False}  # name -> reverse
_MAX_INT32: Final = 2**31 - 1


@dataclass(slots=True)
class FastResult:
    """What the reference ScheduleResult and a Decision need, for one successful attempt."""

    host: str
    feasible: list[str]
    rejected: list[str] = field(default_factory=list)  # visited and rejected (with detail)
    totals: dict[str, int] = field(default_factory=dict)
    plugin_scores: dict[str, dict[str, int]] = field(default_factory=dict)


class _Counter:
    """Matching pods per domain of one topology key, over the nodes eligible for a constraint.

    NOTE: kept exact by on_bind/on_unbind: a pod counts when it is in the namespace, not
    terminating, matched by the selector, and bound to an eligible node.
    """

    __slots__ = ("codes", "counts", "eligible", "has", "namespace", "safe_codes", "selector")

    def __init__(self, c: InternalConstraint, namespace: str, codes: npt.NDArray[np.int32],
                 eligible: B, n_domains: int) -> None:  # fmt: skip
        self.selector = c.selector
        self.namespace = namespace
        self.codes = codes
        self.has: B = codes >= 0
        self.safe_codes = np.where(self.has, codes, 0)
        self.eligible = eligible
        self.counts: I64 = np.zeros(max(n_domains, 1), dtype=np.int64)

    def matches(self, pod: Pod) -> bool:
        meta = pod.metadata
        return (
            meta.namespace == self.namespace
            and meta.deletion_timestamp is None
            and not self.selector.empty
            and self.selector.matches(meta.labels)
        )


@dataclass(slots=True)
class _Signature:
    """Everything about one pod shape that does not change between its decisions."""

    static_ok: B
    static_scores: dict[str, I64]
    skipped_scores: set[str]
    req_cpu: int
    req_mem: int
    req_eph: int
    score_req: tuple[int, int]  # LeastAllocated's non-zero cpu, memory request
    balanced_req: tuple[int, int] | None  # None: BalancedAllocation skips (best effort)
    hard: list[tuple[InternalConstraint, _Counter, I64]]  # constraint, counter, its domains
    soft: list[tuple[InternalConstraint, _Counter | None]]  # None: hostname (per node)
    soft_require_all: bool
    soft_eligible_all: B  # nodes holding every soft topology key
    host_counter: _Counter | None = None
    host_counters: list[_Counter] = field(default_factory=list)


class FastPath:
    """The vectorised cycle over one ClusterState; registers itself as the state's listener."""

    def __init__(self, cluster: ClusterState, fwk: Framework, features: Features) -> None:
        self.cluster = cluster
        self.fwk = fwk
        self.features = features
        self.supported = self._profile_supported()
        self._signatures: dict[bytes, _Signature | None] = {}
        self._counters: list[_Counter] = []
        self._affinity_pods = 0
        self._rebuild()
        cluster.listeners.append(self)

    # ------------------------------------------------------------------ the node table

    def _rebuild(self) -> None:
        infos = self.cluster.list()
        self.names = [i.name for i in infos]
        self.index = {name: i for i, name in enumerate(self.names)}
        n = len(infos)
        self.alloc_cpu = np.zeros(n, np.int64)
        self.alloc_mem = np.zeros(n, np.int64)
        self.alloc_eph = np.zeros(n, np.int64)
        self.alloc_pods = np.zeros(n, np.int64)
        self.req_cpu = np.zeros(n, np.int64)
        self.req_mem = np.zeros(n, np.int64)
        self.req_eph = np.zeros(n, np.int64)
        self.pod_count = np.zeros(n, np.int64)
        self.free_cpu = np.zeros(n, np.int64)  # alloc - req, kept with each bind
        self.free_mem = np.zeros(n, np.int64)
        self.free_eph = np.zeros(n, np.int64)
        self.free_pods = np.zeros(n, np.int64)  # alloc_pods - pod_count - 1 >= 0 means room
        self.nz_cpu = np.zeros(n, np.int64)
        self.nz_mem = np.zeros(n, np.int64)
        self._codes: dict[str, tuple[npt.NDArray[np.int32], dict[str, int]]] = {}
        self._affinity_pods = 0
        for i, info in enumerate(infos):
            a = allocatable_resource(info.node)
            self.alloc_cpu[i] = a.milli_cpu
            self.alloc_mem[i] = a.memory
            self.alloc_eph[i] = a.ephemeral_storage
            self.alloc_pods[i] = a.allowed_pod_number
            for pod in info.pods:
                self._account(pod, i, 1)
        self.free_cpu[:] = self.alloc_cpu - self.req_cpu
        self.free_mem[:] = self.alloc_mem - self.req_mem
        self.free_eph[:] = self.alloc_eph - self.req_eph
        self.free_pods[:] = self.alloc_pods - self.pod_count
        # Two copies of 0..n-1: the visiting order from any start is a slice, not a new array.
        self._double_order = np.concatenate((np.arange(n), np.arange(n)))
        self._all_alloc = bool((self.alloc_cpu != 0).all() and (self.alloc_mem != 0).all())
        self._signatures.clear()
        self._counters.clear()

    def _account(self, pod: Pod, i: int, sign: int) -> None:
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
        affinity = pod.spec.affinity
        if affinity is not None and (
            affinity.pod_affinity is not None or affinity.pod_anti_affinity is not None
        ):
            self._affinity_pods += sign

    def codes(self, key: str) -> tuple[npt.NDArray[np.int32], dict[str, int]]:
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
        self._rebuild()

    def on_bind(self, pod: Pod, node_name: str) -> None:
        i = self.index[node_name]
        self._account(pod, i, 1)
        for c in self._counters:
            if c.eligible[i] and c.matches(pod):
                c.counts[c.codes[i]] += 1

    def on_unbind(self, pod: Pod, node_name: str) -> None:
        i = self.index[node_name]
        self._account(pod, i, -1)
        for c in self._counters:
            if c.eligible[i] and c.matches(pod):
                c.counts[c.codes[i]] -= 1

    # ------------------------------------------------------------------ applicability

    def _profile_supported(self) -> bool:
        known = set(_STATIC_FILTERS) | set(_SKIPPING_FILTERS) | set(_DYNAMIC_FILTERS)
        if any(pl.name not in known for pl in self.fwk.filter_plugins):
            return False
        if any(pl.name not in known for pl in self.fwk.pre_filter_plugins):
            return False
        scores = set(_STATIC_SCORES) | {
            "NodeResourcesFit",
            "NodeResourcesBalancedAllocation",
            "PodTopologySpread",
            "InterPodAffinity",
        }
        if any(pl.name not in scores for pl in self.fwk.score_plugins):
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

    def _pod_supported(self, pod: Pod) -> bool:
        spec = pod.spec
        if spec.node_name or pod.status.nominated_node_name:
            return False
        affinity = spec.affinity
        if affinity is not None and (
            affinity.pod_affinity is not None or affinity.pod_anti_affinity is not None
        ):
            return False
        if any(v.persistent_volume_claim is not None or v.ephemeral is not None
               for v in spec.volumes) or spec.resource_claims:  # fmt: skip
            return False
        for c in (*spec.init_containers, *spec.containers):
            if any(p.host_port for p in c.ports):
                return False
        return self._affinity_pods == 0

    # ------------------------------------------------------------------ one decision

    def try_schedule(
        self, pod: Pod, algorithm: SchedulingAlgorithm, *, detail: bool = True
    ) -> FastResult | None:
        """The reference cycle's outcome, or None where this path does not apply."""
        if not self.supported or not self.names or not self._pod_supported(pod):
            return None
        sig = self._signature(pod)
        if sig is None:
            return None
        n = len(self.names)
        mask = sig.static_ok.copy()
        if sig.req_cpu:
            mask &= self.free_cpu >= sig.req_cpu
        if sig.req_mem:
            mask &= self.free_mem >= sig.req_mem
        if sig.req_eph:
            mask &= self.free_eph >= sig.req_eph
        mask &= self.free_pods >= 1
        pts_self: list[int] = []
        for c, counter, domains in sig.hard:
            if len(domains) < c.min_domains:
                min_match = 0
            elif len(domains):
                min_match = int(counter.counts[domains].min())
            else:
                min_match = _MAX_INT32
            self_match = 1 if c.selector.matches(pod.metadata.labels) else 0
            pts_self.append(self_match)
            # Nodes without the key are rejected anyway: their count can be anything.
            count = counter.counts[counter.safe_codes]
            mask &= counter.has & (count + self_match - min_match <= c.max_skew)
        start = algorithm.next_start_node_index % n
        order = self._double_order[start : start + n]
        feasible_in_order = order[mask[order]]
        if len(feasible_in_order) == 0:
            return None  # the reference writes the FailedScheduling text and preempts
        to_find = num_feasible_nodes_to_find(algorithm.percentage_for(self.fwk), n)
        take = feasible_in_order[:to_find]
        if len(feasible_in_order) >= to_find:
            visited = int(np.flatnonzero(mask[order])[to_find - 1]) + 1
        else:
            visited = n
        algorithm.next_start_node_index = (start + visited) % n
        names = self.names
        # Names are built only for reports; decisions work on indices.
        feasible = [names[i] for i in take] if detail else []
        rejected = [names[i] for i in order[:visited] if not mask[i]] if detail else []
        if len(take) == 1:
            return FastResult(names[int(take[0])], feasible, rejected)
        totals, per_plugin = self._scores(pod, sig, take)
        best = totals.max()
        host = algorithm.choose(_Names(names, take[totals == best]))
        result = FastResult(host, feasible, rejected)
        if detail:
            result.totals = {names[i]: int(t) for i, t in zip(take, totals, strict=True)}
            result.plugin_scores = {
                names[i]: {p: int(v[j]) for p, v in per_plugin.items()} for j, i in enumerate(take)
            }
        return result

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
                raw = sig.static_scores[name][take]
                if name in _NORMALIZED_STATIC:
                    raw = _default_normalize(raw, reverse=_NORMALIZED_STATIC[name])
            elif name == "NodeResourcesFit":
                raw = self._least_allocated(sig, take)
            elif name == "NodeResourcesBalancedAllocation":
                raw = self._balanced(sig, take)
            else:  # PodTopologySpread
                raw = self._spread_scores(sig, take)
            weighted = raw * self.fwk.score_plugin_weight[name]
            per_plugin[name] = weighted
            total += weighted
        return total, per_plugin

    def _least_allocated(self, sig: _Signature, take: npt.NDArray[np.intp]) -> I64:
        fit: Any = self.fwk.plugins["NodeResourcesFit"]
        weights = [r.weight for r in fit.scorer.resources]
        score = np.zeros(len(take), np.int64)
        weight_sum = np.zeros(len(take), np.int64)
        if self._all_alloc:
            total = np.zeros(len(take), np.int64)
            for alloc, used, req, w in (
                (self.alloc_cpu[take], self.nz_cpu[take], sig.score_req[0], weights[0]),
                (self.alloc_mem[take], self.nz_mem[take], sig.score_req[1], weights[1]),
            ):
                free = alloc - (used + req)
                total += np.where(free < 0, 0, free * MAX_NODE_SCORE // alloc) * w
            mean: I64 = total // (weights[0] + weights[1])
            return mean
        for alloc, used, req, w in (
            (self.alloc_cpu[take], self.nz_cpu[take], sig.score_req[0], weights[0]),
            (self.alloc_mem[take], self.nz_mem[take], sig.score_req[1], weights[1]),
        ):
            requested = used + req
            has = alloc != 0
            safe = np.where(has, alloc, 1)
            s = np.where(requested > alloc, 0, (alloc - requested) * MAX_NODE_SCORE // safe)
            score += np.where(has, s * w, 0)
            weight_sum += np.where(has, w, 0)
        return np.where(weight_sum == 0, 0, score // np.where(weight_sum == 0, 1, weight_sum))

    def _balanced(self, sig: _Signature, take: npt.NDArray[np.intp]) -> I64:
        assert sig.balanced_req is not None
        fractions = []
        present = []
        for alloc, used, req in (
            (self.alloc_cpu[take], self.req_cpu[take], sig.balanced_req[0]),
            (self.alloc_mem[take], self.req_mem[take], sig.balanced_req[1]),
        ):
            has = alloc != 0
            f = (used + req).astype(np.float64) / np.where(has, alloc, 1).astype(np.float64)
            fractions.append(np.minimum(f, 1.0))
            present.append(has)
        both = present[0] & present[1]
        std = np.where(both, np.abs((fractions[0] - fractions[1]) / 2), 0.0)
        return ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)

    def _spread_scores(self, sig: _Signature, take: npt.NDArray[np.intp]) -> I64:
        if sig.soft_require_all:
            ignored = ~sig.soft_eligible_all[take]
        else:
            ignored = np.zeros(len(take), np.bool_)
        kept = take[~ignored]
        raw = np.zeros(len(take), np.float64)
        for c, counter in sig.soft:
            if c.topology_key == LABEL_HOSTNAME:
                assert sig.host_counter is not None
                size = len(kept)
                weight = float(np.log(size + 2))
                counts = self._node_counts(sig, c)[take]
                has = self.codes(c.topology_key)[0][take] >= 0
            else:
                assert counter is not None
                codes = counter.codes[take]
                size = len(np.unique(codes[~ignored]))
                weight = float(np.log(size + 2))
                has = codes >= 0
                counts = np.where(has, counter.counts[np.where(has, codes, 0)], 0)
            raw += np.where(has, counts * weight + float(c.max_skew - 1), 0.0)
        scores = _go_round(raw)
        scores[ignored] = -1
        valid = scores[~ignored]
        if len(valid) == 0:
            return np.where(ignored, 0, MAX_NODE_SCORE).astype(np.int64)
        lo, hi = int(valid.min()), int(valid.max())
        if hi == 0:
            return np.where(ignored, 0, MAX_NODE_SCORE).astype(np.int64)
        num = MAX_NODE_SCORE * (hi + lo - scores)
        out = np.sign(num) * (np.abs(num) // hi)
        return np.where(ignored, 0, out).astype(np.int64)

    def _node_counts(self, sig: _Signature, c: InternalConstraint) -> I64:
        """Matching pods per node for a hostname constraint (Score counts every node)."""
        for counter in sig.host_counters:
            if counter.selector == c.selector:
                return counter.counts
        raise AssertionError("hostname counter missing")

    # ------------------------------------------------------------------ signatures

    def _signature(self, pod: Pod) -> _Signature | None:
        key = msgspec.json.encode(
            (pod.metadata.namespace, pod.metadata.labels, pod.metadata.owner_references, pod.spec)
        )
        if key in self._signatures:
            return self._signatures[key]
        sig = self._build_signature(pod)
        self._signatures[key] = sig
        return sig

    def _build_signature(self, pod: Pod) -> _Signature | None:
        fwk = self.fwk
        infos = self.cluster.list()
        n = len(infos)
        state = CycleState()
        static_ok = np.ones(n, np.bool_)
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
        for flt in fwk.filter_plugins:
            if flt.name not in _STATIC_FILTERS or flt.name in state.skip_filter_plugins:
                continue
            for i, info in enumerate(infos):
                if static_ok[i] and not flt.filter(state, pod, info).is_success:
                    static_ok[i] = False
        static_scores: dict[str, I64] = {}
        skipped: set[str] = set()
        for prs in fwk.pre_score_plugins:
            if prs.name not in _STATIC_SCORES and prs.name != "InterPodAffinity":
                continue
            status = prs.pre_score(state, pod, infos)
            if status.is_skip:
                skipped.add(prs.name)
            elif not status.is_success or prs.name == "InterPodAffinity":
                return None
        for scr in fwk.score_plugins:
            if scr.name in _STATIC_SCORES and scr.name not in skipped:
                arr = np.zeros(n, np.int64)
                for i, info in enumerate(infos):
                    score, status = scr.score(state, pod, info)
                    if not status.is_success:
                        return None
                    arr[i] = score
                static_scores[scr.name] = arr
        r = calculate_resource(pod, self.features)
        if r.resource.scalar_resources:
            return None
        fit: Any = fwk.plugins.get("NodeResourcesFit")
        score_req = (0, 0)
        if fit is not None:
            reqs = fit.scorer.calculate_pod_resource_request_list(pod)
            score_req = (reqs[0], reqs[1])
            pre = fit.pre_filter(CycleState(), pod, infos)[1]
            if not pre.is_success:
                return None
            request = _fit_request(fit, pod)
        else:
            request = (0, 0, 0)
        balanced_req: tuple[int, int] | None = None
        balanced: Any = fwk.plugins.get("NodeResourcesBalancedAllocation")
        if balanced is not None:
            reqs = balanced.scorer.calculate_pod_resource_request_list(pod)
            if any(reqs):
                balanced_req = (reqs[0], reqs[1])
            else:
                skipped.add("NodeResourcesBalancedAllocation")
        spread = fwk.plugins.get("PodTopologySpread")
        hard: list[tuple[InternalConstraint, _Counter, I64]] = []
        soft: list[tuple[InternalConstraint, _Counter | None]] = []
        soft_require_all = True
        soft_all = np.ones(n, np.bool_)
        host_counters: list[_Counter] = []
        if isinstance(spread, PodTopologySpread):
            hard_cs = spread.get_constraints(pod, DO_NOT_SCHEDULE)
            soft_cs = spread.get_constraints(pod, SCHEDULE_ANYWAY)
            required = get_required_node_affinity(pod)
            inclusion = self.features.enable_node_inclusion_policy_in_pod_topology_spread
            if not inclusion:
                return None
            hard_all = self._has_all(hard_cs)
            for c in hard_cs:
                eligible = hard_all & self._policy_mask(c, pod, required)
                counter = self._counter(c, pod.metadata.namespace, eligible)
                domains = np.unique(counter.codes[eligible & (counter.codes >= 0)])
                hard.append((c, counter, domains.astype(np.int64)))
            if not soft_cs:
                skipped.add("PodTopologySpread")
            else:
                soft_require_all = bool(pod.spec.topology_spread_constraints) or not (
                    spread.system_defaulted
                )
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
            static_ok=static_ok,
            static_scores=static_scores,
            skipped_scores=skipped,
            req_cpu=request[0],
            req_mem=request[1],
            req_eph=request[2],
            score_req=score_req,
            balanced_req=balanced_req,
            hard=hard,
            soft=soft,
            soft_require_all=soft_require_all,
            soft_eligible_all=soft_all,
            host_counter=host_counters[0] if host_counters else None,
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
        for i, info in enumerate(self.cluster.list()):
            if not eligible[i] or codes[i] < 0:
                continue
            counter.counts[codes[i]] += sum(1 for p in info.pods if counter.matches(p))
        self._counters.append(counter)
        return counter


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


def _fit_request(fit: Any, pod: Pod) -> tuple[int, int, int]:
    """The pod's request as NodeResourcesFit's PreFilter computes it (cpu, memory, storage)."""
    from topospread.plugins.noderesources.fit import compute_pod_resource_request

    r = compute_pod_resource_request(pod, fit.enable_pod_level_resources)
    return r.milli_cpu, r.memory, r.ephemeral_storage


def _default_normalize(raw: I64, *, reverse: bool) -> I64:
    """Upstream: DefaultNormalizeScore (plugins/helper/normalize_score.go, v1.35)."""
    top = int(raw.max()) if len(raw) else 0
    if top == 0:
        return np.full(len(raw), MAX_NODE_SCORE, np.int64) if reverse else raw
    scaled = MAX_NODE_SCORE * raw // top
    return MAX_NODE_SCORE - scaled if reverse else scaled


def _go_round(x: F64) -> I64:
    """Go's math.Round over an array (halves away from zero; exact below a half)."""
    t = np.trunc(x)
    frac = np.abs(x - t)
    return (t + np.where(frac >= 0.5, np.sign(x), 0)).astype(np.int64)


__all__ = ["FastPath", "FastResult"]
