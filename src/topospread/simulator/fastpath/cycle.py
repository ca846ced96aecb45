"""FastPath: one scheduling cycle over the node table, the profile's plugins in order, each
through its kernel.

Every filter kernel yields, per node, the index of the status it rejects with (0: passes), in
the profile's filter order, so that a failed attempt gets its per-node statuses and
FailedScheduling message from the same vectors (the scheduler then runs the reference
PostFilter over them); then upstream's sampling (nodes visited from the rotating start index
until enough are feasible), each score kernel's normalized scores and their weights, and host
selection with the same random draws.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from topospread.api.types import Node, Pod
from topospread.cluster.state import ClusterState
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.nominator import pod_priority
from topospread.framework.runtime import Framework
from topospread.framework.schedule_one import (
    Diagnosis,
    SchedulingAlgorithm,
    num_feasible_nodes_to_find,
)
from topospread.framework.status import Status, format_reasons
from topospread.framework.types import NodeInfo
from topospread.simulator.fastpath import screen
from topospread.simulator.fastpath.detail import FastDetail, NodeKeys
from topospread.simulator.fastpath.kernels import Attempt, Kernel
from topospread.simulator.fastpath.kernels.podtopologyspread import MISSING, PodTopologySpread
from topospread.simulator.fastpath.lazy import LazyVerdicts
from topospread.simulator.fastpath.nominated import Nominations
from topospread.simulator.fastpath.profile import ProfileKernels
from topospread.simulator.fastpath.shapes import (
    Shapes,
    Signature,
    Static,
    honours_taints,
    static_key,
)
from topospread.simulator.fastpath.statuses import Names, StatusTable, VectorStatuses
from topospread.simulator.fastpath.table import NodeTable, Requests
from topospread.simulator.fastpath.vectors import I32, I64, B


@dataclass(slots=True)
class FastResult:
    """What the reference ScheduleResult and a Decision need, for one successful attempt."""

    host: str
    # With report detail: the feasible nodes, scores and rejected nodes, as columns.
    detail: FastDetail | None = None


@dataclass(slots=True)
class FastFailure:
    """No node fits: the diagnosis the reference filters would have written, and each node's
    status as an index into the path's status table."""

    diagnosis: Diagnosis
    rejected_with: I32 | None = None
    # Per node, whether its status is Unschedulable (preemption may help): taken once.
    unschedulable: B | None = None


def _table_attribute(name: str) -> Any:
    """A node table attribute reachable from the FastPath (preemption reads the columns)."""
    return property(
        lambda self: getattr(self.table, name),
        lambda self, value: setattr(self.table, name, value),
    )


class FastPath:
    """The vectorised cycle over one ClusterState; registers itself as the state's listener
    (and as its scheduler's Nominator's)."""

    # The node table's names and columns, reachable from here (preemption reads them).
    names: list[str] = _table_attribute("names")
    index: dict[str, int] = _table_attribute("index")
    _bound: dict[int, Requests] = _table_attribute("bound")
    alloc_cpu: I64 = _table_attribute("alloc_cpu")
    alloc_mem: I64 = _table_attribute("alloc_mem")
    alloc_eph: I64 = _table_attribute("alloc_eph")
    alloc_pods: I64 = _table_attribute("alloc_pods")
    req_cpu: I64 = _table_attribute("req_cpu")
    req_mem: I64 = _table_attribute("req_mem")
    req_eph: I64 = _table_attribute("req_eph")
    pod_count: I64 = _table_attribute("pod_count")
    nz_cpu: I64 = _table_attribute("nz_cpu")
    nz_mem: I64 = _table_attribute("nz_mem")
    attachable: I64 = _table_attribute("attachable")
    attach_risky: I64 = _table_attribute("attach_risky")
    min_priority: I64 = _table_attribute("min_priority")
    free_cpu: I64 = _table_attribute("free_cpu")
    free_mem: I64 = _table_attribute("free_mem")
    free_eph: I64 = _table_attribute("free_eph")
    free_pods: I64 = _table_attribute("free_pods")

    def __init__(self, cluster: ClusterState, fwk: Framework, features: Features) -> None:
        self.cluster = cluster
        self.fwk = fwk
        self.features = features
        self.statuses = StatusTable()
        self.table = NodeTable(cluster, features)
        self.shapes = Shapes(self)
        self.nominations = Nominations(self.table)
        self.profile = ProfileKernels(self, fwk)
        self.kernels = self.profile.by_name
        self.supported = self.profile.supported
        spread = self.kernels.get("PodTopologySpread")
        self._spread = spread if isinstance(spread, PodTopologySpread) else None
        self._signatures: dict[tuple[bytes, Any], Signature | None] = {}
        self._keys: NodeKeys | None = None  # the current node names, encoded for reports
        self._last_supported: tuple[Pod | None, bool] = (None, False)
        self._generation = -1  # the cluster index's rows the signatures' counters are on
        self._rebuild()
        cluster.listeners.append(self)

    def _rebuild(self) -> None:
        """Rebuild the node table (carrying over unchanged rows), then the shapes' statics."""
        # NOTE: the index and the table are rebuilt together, from one node order, so that
        # their rows agree; the signatures (holding the index's counters) are dropped.
        self._generation = self.cluster.index().generation
        rebuilt = self.table.rebuild()
        self.shapes.carry(rebuilt)
        self._signatures.clear()
        self.nominations.recount()

    def _fresh(self) -> None:
        index = self.cluster.index()  # rebuilt first if stale
        if self.table.stale or index.generation != self._generation:
            self._rebuild()

    # ClusterListener
    def on_nodes_changed(self) -> None:
        # NOTE: rebuilt on next use, so that adding a thousand nodes costs one rebuild.
        self.table.stale = True

    def on_node_updated(self, old: Node, new: Node) -> None:
        """A node changed in place. Where its labels and images stay (a taint, cordoning, its
        allocatable: what a zone outage or a drain changes on many nodes at once), only its
        row is recomputed — allocatable, and each pod shape's static verdicts and scores on
        it; signatures whose spread constraints honour taints are dropped (rebuilt on their
        next pod). Anything else rebuilds the table."""
        table = self.table
        if table.stale:
            return  # the rebuild will read the node as it is
        i = table.index.get(new.metadata.name)
        if (
            i is None
            or old.metadata.labels != new.metadata.labels
            or old.status.images != new.status.images
        ):
            table.stale = True  # rebuilt on next use, with the index
            return
        table.update_resources(i, new)
        stale = self.shapes.refresh_node(self.cluster.infos[new.metadata.name], i, new)
        for sig_key in list(self._signatures):
            shape, constraints = sig_key
            if shape in stale or honours_taints(constraints):
                del self._signatures[sig_key]

    def on_bind(self, pod: Pod, node_name: str) -> None:
        if self.table.stale:
            self.table.dirty.add(node_name)  # the rebuild recounts its row
            return
        self.table.account(pod, self.table.index[node_name], 1)

    def on_unbind(self, pod: Pod, node_name: str) -> None:
        if self.table.stale:
            self.table.dirty.add(node_name)
            return
        self.table.account(pod, self.table.index[node_name], -1)

    # NominatorListener
    def on_nominated(self, pod: Pod, node_name: str, sign: int) -> None:
        self.nominations.nominate(pod, node_name, sign)

    # ------------------------------------------------------------------ applicability

    def accepts(self, pod: Pod) -> bool:
        """Whether this path may decide the pod's attempt (its signature may still decline)."""
        self._fresh()
        if not (self.supported and self.table.names):
            return False
        # The scheduler asks before the attempt, the attempt asks again: the pod's answer is
        # kept (pods are immutable; the last one held, so that its identity is not reused).
        last, supported = self._last_supported
        if pod is not last:
            supported = _pod_supported(pod)
            self._last_supported = (pod, supported)
        return supported

    def signature(self, pod: Pod) -> Signature | None:
        """The pod's shape and spread constraints against the table; None: declined."""
        key = static_key(pod)
        statics = self.shapes.statics
        static = statics.get(key, MISSING)
        if static is MISSING:
            static = statics[key] = self.shapes.build(pod)
        if static is None:
            return None
        assert isinstance(static, Static)
        spread = self._spread
        constraints = spread.constraints(pod) if spread is not None else None
        if constraints is MISSING:
            return None  # a selector does not parse: the reference reports it
        sig_key = (key, constraints)
        sig = self._signatures.get(sig_key, MISSING)
        if sig is MISSING:
            if spread is not None:
                sig = spread.signature(pod, static, constraints)
            else:
                sig = Signature(static, [], [], True, np.ones(len(self.table.names), np.bool_),
                                static.skipped_scores | {"PodTopologySpread"})  # fmt: skip
            self._signatures[sig_key] = sig
        assert sig is None or isinstance(sig, Signature)
        return sig

    def counts_nominated(self, pod: Pod) -> bool:
        """Whether the vectors can take the nominated pods into account for this pod: only
        NodeResourcesFit can then tell a node with them from one without (no DoNotSchedule
        spread constraint, no required inter-pod term of the pod's own, none of the nominated
        pods of at least its priority carrying pod (anti-)affinity, no filter run through its
        reference plugin, for every pod or for this pod's claims)."""
        sig = self.signature(pod) if self.accepts(pod) else None
        if sig is None or sig.hard or sig.static.per_attempt:
            return False
        if self.profile.reference_filters:
            return False
        terms = sig.static.terms
        if terms.required_affinity_terms or terms.required_anti_affinity_terms:
            return False
        return not self.nominations.with_affinity(pod_priority(pod))

    # ------------------------------------------------------------------ preemption

    def filter_kernels(self) -> list[tuple[str, Kernel]]:
        """The profile's filter plugins in order, each with its kernel."""
        return self.profile.filters

    def unschedulable_positions(self, failure: FastFailure) -> Sequence[int] | None:
        return screen.unschedulable_positions(self, failure)

    def preemption_may_find_victims(self, pod: Pod, failure: FastFailure) -> bool:
        return screen.preemption_may_find_victims(self, pod, failure)

    def preemption_screen(self, pod: Pod, failure: FastFailure) -> Sequence[int] | None:
        return screen.preemption_screen(self, pod, failure)

    def _nominated_requests(self, pod: Pod) -> tuple[I64, I64, I64, I64]:
        """Per node, what nominated pods of at least the pod's priority request (preemption's
        kernel reads it; ``Nominations.requests``)."""
        return self.nominations.requests(pod)

    def seed_state(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> None:
        """Write into a decision's cycle state what the PreFilter plugins that skip for every
        pod this path takes (kernels flagged ``seeds_state``) write before skipping, for the
        points that read it after this path decided (PostFilter, Reserve, PreBind): the
        reference PreFilter would have written the same. The dynamic plugins' state is only
        needed by preemption's dry run, which runs the reference PreFilter itself.

        NOTE: relies on those plugins skipping for every accepted pod (``Shapes.build``
        declines the pod otherwise), so that running them alone equals running them all.
        """
        for pl in self.profile.seeding:
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
        state: CycleState | None = None,
        prefiltered: bool = False,
    ) -> FastResult | FastFailure | None:
        """The reference cycle's outcome, or None where this path does not apply.

        ``overrides`` are the statuses of the nodes that hold nominated pods of at least the
        pod's priority, as the reference RunFilterPluginsWithNominatedPods gave them (the
        vectors count bound pods only); ``prior`` is the status of the pod's own nominated node
        when it was tried alone first and failed (the reference diagnosis keeps it).
        ``count_nominated`` (where ``counts_nominated`` allows it) filters with the nominated
        pods of at least the pod's priority counted on their nodes, as the reference's first
        pass does; where that passes, the second pass, without them, passes too. ``state``:
        the decision's cycle state, which plugins without a kernel write (a fresh one if
        None); ``prefiltered``: every PreFilter plugin already ran on it.
        """
        if not self.accepts(pod):
            return None
        self.table.sums_memo.clear()
        sig = self.signature(pod)
        if sig is None:
            return None
        table = self.table
        n = len(table.names)
        nominated = self.nominations.requests(pod) if count_nominated else None
        attempt = Attempt(pod, sig, state if state is not None else CycleState(), nominated)
        attempt.prefiltered = prefiltered and state is not None
        verdicts = self.profile.run_filters(attempt, n)
        if verdicts is None:
            return None
        lazy: LazyVerdicts | None = None
        rejected_with: I32 | None = None
        if isinstance(verdicts, LazyVerdicts):
            lazy = verdicts
        else:
            rejected_with = verdicts
        for name, status in (overrides or {}).items():
            if lazy is not None:
                lazy.override(table.index[name], self.statuses.intern(status))
            else:
                assert rejected_with is not None
                rejected_with[table.index[name]] = self.statuses.intern(status)
        start = algorithm.next_start_node_index % n
        order = table.double_order[start : start + n]
        to_find = num_feasible_nodes_to_find(algorithm.percentage_for(self.fwk), n)
        if lazy is not None:
            take, visited = lazy.search(order, to_find)
            if not len(take):
                rejected_with = lazy.resolve(np.arange(n))
            if attempt.declined:
                return None
        else:
            assert rejected_with is not None
            feasible = np.flatnonzero(rejected_with == 0)  # in index order
            # The first ``to_find`` feasible nodes in visiting order (from ``start`` round
            # the nodes): those from ``start`` on, then those before it.
            split = int(np.searchsorted(feasible, start))
            take = feasible[split : split + to_find]
            if len(take) < to_find:
                take = np.concatenate((take, feasible[: min(split, to_find - len(take))]))
            # A node's place in the visiting order is its index less ``start``, modulo n.
            visited = (int(take[to_find - 1]) - start) % n + 1 if len(feasible) >= to_find else n
        names = table.names
        statuses = self.statuses.table
        if len(take) == 0:
            assert rejected_with is not None
            # Every node was visited: the search starts where this one did.
            algorithm.next_start_node_index = start
            diagnosis = Diagnosis()
            for status in (prior or {}).values():
                diagnosis.add_plugin_status(status)
            by_node = VectorStatuses(names, table.index, order, rejected_with, statuses)
            diagnosis.node_to_status = cast(dict[str, Status], by_node)  # read only from here
            for index in by_node.distinct():
                diagnosis.add_plugin_status(statuses[index])
            return FastFailure(diagnosis, rejected_with)
        scored = self.profile.run_scores(attempt, take) if len(take) > 1 else None
        if attempt.declined:
            return None
        # The reference counts every node with a status: the pod's own nominated node, tried
        # alone first, too, where the search did not reach it again.
        missed = sum(
            not _in_window(table.index.get(name), start, visited, n) for name in prior or {}
        )
        algorithm.next_start_node_index = (start + visited + missed) % n
        if scored is None:
            host = names[int(take[0])]
        else:
            totals = scored[0]
            host = algorithm.choose(Names(names, take[totals == totals.max()]))
        row = table.index[host]
        for kernel in self.profile.choosers:
            kernel.chose(attempt, row)
        if not detail:
            return FastResult(host)
        # The detail stays in columns; reports write or build it when they read it.
        seen = order[:visited]
        if lazy is not None:
            codes = lazy.resolve(seen)
            if attempt.declined:
                return None
            seen, codes = seen[codes != 0], codes[codes != 0]
        else:
            assert rejected_with is not None
            seen = seen[rejected_with[seen] != 0]
            codes = rejected_with[seen]
        if len(codes):  # the table filled up to the largest status seen, then indexed
            self.statuses.formatted(int(codes.max()))
        keys = self._keys
        if keys is None or keys.names is not names:
            keys = self._keys = NodeKeys.of(names)
        return FastResult(
            host,
            FastDetail(
                keys,
                take,
                None if scored is None else scored[0],
                [] if scored is None else list(scored[1]),
                [] if scored is None else list(scored[1].values()),
                {name: format_reasons(status) for name, status in (prior or {}).items()},
                seen,
                codes,
                self.statuses.formatted_table(),
            ),
        )


def _in_window(row: int | None, start: int, visited: int, n: int) -> bool:
    """Whether the node of ``row`` (None: not a node of the table) is among the ``visited``
    nodes a search of ``n`` nodes visited from ``start``, round the nodes."""
    return row is not None and (row - start) % n < visited


def _pod_supported(pod: Pod) -> bool:
    """Pods the kernels never take: bound ones, with resource claims, host ports."""
    spec = pod.spec
    if spec.node_name or spec.resource_claims:
        return False
    return not any(p.host_port for c in (*spec.init_containers, *spec.containers) for p in c.ports)


__all__ = ["FastFailure", "FastPath", "FastResult", "Requests"]
