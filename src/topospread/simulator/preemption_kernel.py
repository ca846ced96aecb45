"""Preemption's dry run for every screened node at once, over the fast path's node table.

Where NodeResourcesFit is the only filter the victims can sway (DefaultPreemption's
``_fit_alone``) and the fast path's screen has passed a node (its node-only filters pass, and Fit
passes with every lower-priority pod gone and the nominated pods of at least the pod's priority
counted in), SelectVictimsOnNode reduces to arithmetic on four numbers per node — the room left
for cpu, memory, ephemeral storage and pods — and the node's lower-priority pods in importance
order. This module does that arithmetic for all the screened nodes together:

- each node's pods sorted most important first, kept as a padded matrix of nodes by pods (a
  node re-sorted when its pods change); the lower-priority pods are a suffix of each row;
- PDB violations as a running count per budget along each row (``filterPodsWithPDBViolation``);
- the reprieve, one column at a time for every row: PDB-violating pods first, then the others,
  each kept back when the pod still fits with it;
- DryRunPreemption's stopping rule (each kind of candidate kept up to ``numCandidates``, stop
  once a PDB-respecting one is among at least ``numCandidates``) over running counts, and
  pickOneNodeForPreemption's default criteria over the kept candidates' columns.

It reads the fast path only through its table (``free_*``, ``min_priority``, ``names``, ``index``,
``_bound``, ``_nominated_requests``) and the cluster's NodeInfos, and answers None wherever it
cannot prove the reference's answer; the caller then dry-runs node by node.
tests/test_preemption_kernel.py checks it against the reference Evaluator on random clusters.

Upstream: SelectVictimsOnNode (plugins/defaultpreemption/default_preemption.go), DryRunPreemption
and pickOneNodeForPreemption (framework/preemption/preemption.go), v1.35
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Protocol, overload

import numpy as np
import numpy.typing as npt

from topospread.api.types import Node, Pod, PodDisruptionBudget
from topospread.framework.features import Features
from topospread.framework.nominator import pod_priority
from topospread.framework.preemption import (
    Candidate,
    RankedCandidates,
    Victims,
    importance_order,
    pod_start_time,
)
from topospread.framework.types import NodeInfo
from topospread.plugins.defaultpreemption.plugin import counts_against, pdb_selectors
from topospread.plugins.noderesources.resource_helpers import Resource, calculate_resource

I64 = npt.NDArray[np.int64]
B = npt.NDArray[np.bool_]

# The sum-of-priorities criterion shifts every priority by MaxInt32+1 so that all are >= 0.
_PRIORITY_SHIFT: Final = 2**31
# Padding of the pods matrix: above every priority, so never a victim.
_NO_POD: Final = 2**31
# The fields of the pods matrix, per node and pod.
_PRIORITY, _START, _CPU, _MEM, _EPH = range(5)
# Nodes dry-run in the first batch, at least: the search usually stops after numCandidates.
_MIN_BATCH: Final = 256


class NodeTable(Protocol):
    """What the kernel reads of the fast path (simulator/fastpath.py's FastPath)."""

    free_cpu: I64
    free_mem: I64
    free_eph: I64
    free_pods: I64
    min_priority: I64
    names: list[str]
    index: dict[str, int]
    _bound: Any  # priority -> per-node summed requests of the bound pods of that priority

    def _nominated_requests(self, pod: Pod) -> tuple[I64, I64, I64, I64]: ...


class NodeInfos(Protocol):
    listeners: Any

    def get(self, name: str) -> NodeInfo | None: ...


class _Found(RankedCandidates):
    """The kept candidates in DryRunPreemption's order (PDB-respecting first), each read out
    of its batch's outcome when asked for."""

    __slots__ = ("_at", "best")

    def __init__(self, kept: list[tuple[_Outcome, npt.NDArray[np.intp]]], best: int) -> None:
        self._at = [(outcome, i) for outcome, idx in kept for i in idx.tolist()]
        self.best = self[best]

    def __len__(self) -> int:
        return len(self._at)

    @overload
    def __getitem__(self, i: int) -> Candidate: ...
    @overload
    def __getitem__(self, i: slice) -> list[Candidate]: ...
    def __getitem__(self, i: int | slice) -> Candidate | list[Candidate]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        outcome, at = self._at[i]
        return outcome.candidate(at)


class PreemptionKernel:
    """DefaultPreemption's ``VictimsKernel`` over one fast path's node table.

    It keeps, per table row, the node's pods most important first (``importance_order``) as
    a matrix of priorities, start times and cpu, memory and ephemeral-storage requests,
    padded to the most pods on a node; a cluster listener, it re-sorts only the nodes whose
    pods changed since its last use.
    """

    def __init__(self, table: NodeTable, infos: NodeInfos) -> None:
        self.table = table
        self.infos = infos
        self._index: dict[str, int] | None = None  # the table's index the rows follow
        self._features: Features | None = None
        self._dirty: set[str] = set()
        self._pods: list[list[Pod]] = []
        self._grid: I64 = np.zeros((5, 0, 0), np.int64)
        infos.listeners.append(self)

    # -- ClusterListener: which rows to re-sort

    def on_nodes_changed(self) -> None:
        self._index = None

    def on_node_updated(self, old: Node, new: Node) -> None:
        self._dirty.add(new.metadata.name)

    def on_bind(self, pod: Pod, node_name: str) -> None:
        self._dirty.add(node_name)

    def on_unbind(self, pod: Pod, node_name: str) -> None:
        self._dirty.add(node_name)

    def _refresh(self, features: Features) -> bool:
        """Bring the rows up to date with the table and the cluster; False if a node of the
        table is missing from the cluster."""
        t = self.table
        if self._index is not t.index or self._features is not features:
            self._index, self._features = t.index, features
            self._dirty.clear()
            self._pods = [[] for _ in t.names]
            self._grid = np.full((5, len(t.names), 1), _NO_POD, np.int64)
            return all(self._sort_row(i, name) for i, name in enumerate(t.names))
        dirty, self._dirty = self._dirty, set()
        return all(self._sort_row(t.index[n], n) for n in dirty if n in t.index)

    def _sort_row(self, row: int, name: str) -> bool:
        info = self.infos.get(name)
        if info is None:
            return False
        assert self._features is not None
        pods = importance_order(info.pods)
        grid = self._grid
        if len(pods) > grid.shape[2]:
            wider = np.full(
                (5, grid.shape[1], max(len(pods), 2 * grid.shape[2])), _NO_POD, np.int64
            )
            wider[:, :, : grid.shape[2]] = grid
            self._grid = grid = wider
        grid[:, row, :] = _NO_POD
        for j, p in enumerate(pods):
            r = calculate_resource(p, self._features).resource
            grid[:, row, j] = (
                pod_priority(p),
                pod_start_time(p),
                r.milli_cpu,
                r.memory,
                r.ephemeral_storage,
            )
        self._pods[row] = pods
        return True

    # -- the dry run

    def candidates(
        self,
        pod: Pod,
        need: Resource,
        features: Features,
        nodes: Sequence[NodeInfo],
        order: Sequence[int],
        num_candidates: int,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> RankedCandidates | None:
        """``Evaluator.dry_run_screened``'s candidates over ``nodes[i] for i in order`` (the
        visiting order of the nodes passing the fast path's screen), with
        pickOneNodeForPreemption's pick; None when this kernel cannot tell (the nodes are not
        the table's rows, or the arithmetic finds a node without a victim or without room:
        the node-by-node dry run says why).

        NOTE: relies on the table being fresh and its rows being the cluster's nodes in order
        (``nodes`` all of them: the fast path's unschedulable positions cover every node when
        it screens): the screen, computed in the same attempt, refreshed the table, and
        nothing binds before PostFilter.
        """
        t = self.table
        if not order or num_candidates <= 0 or len(nodes) != len(t.names):
            return None
        if not self._refresh(features):
            return None
        priority = pod_priority(pod)
        rows = np.array(order, np.intp)
        if (t.min_priority[rows] >= priority).any():
            return None
        # The room with every pod of lower priority gone and the nominated pods of at least
        # the pod's priority in: what Fit sees in SelectVictimsOnNode.
        nominated = t._nominated_requests(pod)
        room = np.stack([t.free_pods, t.free_cpu, t.free_mem, t.free_eph]) - np.stack(
            [nominated[3], nominated[0], nominated[1], nominated[2]]
        )
        for level_priority, level in t._bound.items():
            if level_priority < priority:
                room += np.stack([level.pods, level.cpu, level.mem, level.eph])
        room = room[:, rows]
        k = num_candidates
        kept: tuple[list[Any], list[Any]] = ([], [])  # PDB-respecting, violating
        counts = [0, 0]
        start = 0
        size = max(4 * k, _MIN_BATCH)
        while start < len(rows):
            stop = min(start + size, len(rows))
            outcome = self._dry_run(rows[start:stop], room[:, start:stop], priority, need, pdbs)
            if outcome is None:
                return None
            done = _keep(outcome, k, kept, counts)
            if done:
                break
            start, size = stop, 2 * size
        chosen = kept[0] + kept[1]
        keys = np.concatenate([outcome.keys[:, idx] for outcome, idx in chosen], axis=1)
        return _Found(chosen, _pick(keys))

    def _dry_run(
        self,
        rows: npt.NDArray[np.intp],
        room: I64,
        priority: int,
        need: Resource,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> _Outcome | None:
        grid = self._grid[:, rows, :]
        lower = grid[_PRIORITY] < priority  # the potential victims, a suffix of each row
        depth = int(lower.sum(axis=1).max())
        if depth == 0:
            return None
        n = len(rows)
        violating = np.zeros(lower.shape, np.bool_)
        if pdbs:
            selectors = pdb_selectors(pdbs)
            where = np.nonzero(lower)
            victims = [self._pods[rows[i]][j] for i, j in zip(*where, strict=True)]
            for pdb, selector in zip(pdbs, selectors, strict=True):
                counted = np.zeros(lower.shape, np.int64)
                counted[where] = [counts_against(pdb, selector, p) for p in victims]
                # A pod violates a budget once the running count of its pods exceeds what the
                # budget allows (filterPodsWithPDBViolation's decrement below zero).
                running = np.cumsum(counted, axis=1)
                violating |= (counted > 0) & (running > pdb.status.disruptions_allowed)
        # The screen's verdict, checked again: the pod fits with every victim gone.
        needs = np.array([1, need.milli_cpu, need.memory, need.ephemeral_storage], np.int64)
        asked = needs > 0
        if not (room[asked] >= needs[asked, None]).all():
            return None
        # The reprieve order: PDB-violating pods, then the others, each most important first.
        rank = np.where(lower, np.where(violating, 0, 1), 2)
        order = np.argsort(rank, axis=1, kind="stable")[:, :depth]
        at = np.arange(n)[:, None]
        taken = grid[:, at, order]  # (5, n, depth) in reprieve order
        valid = lower[at, order]
        back = np.zeros((n, depth), np.bool_)
        left = room.copy()
        # Fit's test with one more pod given back: the pod must still be allowed, and no
        # nonzero request short. ``left`` rows: pods, cpu, memory, storage.
        for step in range(depth):
            trial = left - np.concatenate([np.ones((1, n), np.int64), taken[_CPU:, :, step]])
            ok = valid[:, step] & (trial[asked] >= needs[asked, None]).all(axis=0)
            back[:, step] = ok
            left = np.where(ok, trial, left)
        victim = np.zeros(lower.shape, np.bool_)
        victim[at, order] = valid & ~back
        count = victim.sum(axis=1)
        if not count.all():
            return None
        # pickOneNodeForPreemption reads the first victim: the highest priority, and the
        # earliest start among the victims of that priority (importance order sorts by start
        # within a priority).
        first = np.argmax(victim, axis=1)
        violations = (victim & violating).sum(axis=1)
        total = np.where(victim, grid[_PRIORITY], 0).sum(axis=1) + _PRIORITY_SHIFT * count
        keys = np.stack(
            [
                -violations,
                -grid[_PRIORITY, at[:, 0], first],
                -total,
                -count,
                grid[_START, at[:, 0], first],
            ]
        )
        return _Outcome(self, rows, victim, violations, keys)


class _Outcome:
    """One batch's dry run: per node its victims, PDB violations and ranking keys."""

    __slots__ = ("kernel", "keys", "rows", "victim", "violations")

    def __init__(
        self, kernel: PreemptionKernel, rows: npt.NDArray[np.intp], victim: B, violations: I64,
        keys: I64,
    ) -> None:  # fmt: skip
        self.kernel = kernel
        self.rows = rows
        self.victim = victim
        self.violations = violations
        self.keys = keys

    def candidate(self, i: int) -> Candidate:
        row = int(self.rows[i])
        pods = self.kernel._pods[row]
        chosen = tuple(pods[j] for j in np.flatnonzero(self.victim[i]).tolist())
        name = self.kernel.table.names[row]
        return Candidate(name, Victims(chosen, int(self.violations[i])))


def _keep(outcome: _Outcome, k: int, kept: tuple[list[Any], list[Any]], counts: list[int]) -> bool:
    """DryRunPreemption's rule over one batch, in visiting order: each kind of candidate kept
    up to ``k``; the search stops after the first candidate at which a PDB-respecting one is
    kept and both kinds together (each capped at ``k``) reach ``k``. True when it stopped.
    ``counts`` are the candidates of each kind found in the batches before."""
    bad = outcome.violations > 0
    n_ok = counts[0] + np.cumsum(~bad)
    n_bad = counts[1] + np.cumsum(bad)
    stops = np.flatnonzero((n_ok >= 1) & (np.minimum(n_ok, k) + np.minimum(n_bad, k) >= k))
    end = int(stops[0]) + 1 if len(stops) else len(bad)
    for kind, mine in ((0, ~bad[:end]), (1, bad[:end])):
        found = np.flatnonzero(mine)
        room = max(k - min(counts[kind], k), 0)
        if room and len(found):
            kept[kind].append((outcome, found[:room]))
        counts[kind] += len(found)
    return bool(len(stops))


def _pick(ranks: I64) -> int:
    """pickOneNodeForPreemption's default criteria, as rows of keys (higher is better), each
    breaking the previous one's ties; then the first candidate."""
    chosen = np.ones(ranks.shape[1], np.bool_)
    for key in ranks:
        chosen &= key == key[chosen].max()
    return int(np.argmax(chosen))


__all__ = ["NodeInfos", "NodeTable", "PreemptionKernel"]
