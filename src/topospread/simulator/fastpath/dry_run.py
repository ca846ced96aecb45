"""Preemption's dry run for every screened node at once, over the fast path's node table.

Where NodeResourcesFit is the only filter the victims can sway (DefaultPreemption's
``_fit_alone``) and the fast path's screen has passed a node (its node-only filters pass, and Fit
passes with every lower-priority pod gone and the nominated pods of at least the pod's priority
counted in), SelectVictimsOnNode reduces to arithmetic on four numbers per node — the room left
for cpu, memory, ephemeral storage and pods — and the node's lower-priority pods in importance
order. This module does that arithmetic for all the screened nodes together:

- each node's pods sorted most important first, kept as a padded matrix of nodes by pods (a
  node sorted when first needed, again only after its pods change); the lower-priority pods
  are a suffix of each row;
- PDB violations as a running count per budget along each row (``filterPodsWithPDBViolation``);
- the reprieve, one column at a time for every row: PDB-violating pods first, then the others,
  each kept back when the pod still fits with it;
- DryRunPreemption's stopping rule (each kind of candidate kept up to ``numCandidates``, stop
  once a PDB-respecting one is among at least ``numCandidates``) over running counts, and
  pickOneNodeForPreemption's default criteria over the kept candidates' columns.

It reads the fast path only through its table (``free_*``, ``names``, ``index``,
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
from topospread.plugins.defaultpreemption.budgets import counts_against, pdb_selectors
from topospread.plugins.noderesources.resource_helpers import Resource, calculate_resource

I64 = npt.NDArray[np.int64]
B = npt.NDArray[np.bool_]
Rows = npt.NDArray[np.intp]

# The sum-of-priorities criterion shifts every priority by MaxInt32+1 so that all are >= 0.
_PRIORITY_SHIFT: Final = 2**31
# Padding of the pods matrix: above every priority, so never a victim.
_NO_POD: Final = 2**31
# The fields of the pods matrix, per node and pod: priority, start time, then what the pod
# takes of each of Fit's quantities (one pod, cpu, memory, ephemeral storage).
_PRIORITY, _START, _ONE = 0, 1, 2
_FIELDS: Final = 6
# The most node-by-pod cells the matrix may hold (six int64 fields each: 96 MiB); past it the
# kernel declines and the dry run goes node by node.
_MAX_CELLS: Final = 2**21
# Nodes dry-run in the first batch, at least, where budgets may stop fewer nodes being kept.
_MIN_BATCH: Final = 256


class NodeTable(Protocol):
    """What the kernel reads of the fast path (simulator/fastpath/'s FastPath)."""

    free_cpu: I64
    free_mem: I64
    free_eph: I64
    free_pods: I64
    names: list[str]
    index: dict[str, int]
    _bound: Any  # priority -> per-node summed requests of the bound pods of that priority

    def _nominated_requests(self, pod: Pod) -> tuple[I64, I64, I64, I64]: ...


class NodeInfos(Protocol):
    listeners: Any

    def get(self, name: str) -> NodeInfo | None: ...


class PreemptionKernel:
    """DefaultPreemption's ``VictimsKernel`` over one fast path's node table.

    It keeps, per table row, the node's pods most important first (``importance_order``) as
    a matrix of priorities, start times and requests, padded to the most pods on a node; a
    cluster listener, it sorts a node when a dry run first needs it and again only after its
    pods change.
    """

    def __init__(self, table: NodeTable, infos: NodeInfos) -> None:
        self.table = table
        self.infos = infos
        self._index: dict[str, int] | None = None  # the table's index the rows follow
        self._features: Features | None = None
        self._dirty: set[str] = set()
        self._pods: list[list[Pod]] = []
        self._grid: I64 = np.zeros((_FIELDS, 0, 0), np.int64)
        self._sorted: B = np.zeros(0, np.bool_)  # per row: its pods sorted in the matrix
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

    def _refresh(self, features: Features) -> None:
        """Follow the table's rows: all unsorted after the nodes changed, the nodes whose pods
        changed since the last use unsorted."""
        t = self.table
        if self._index is not t.index or self._features is not features:
            self._index, self._features = t.index, features
            self._dirty.clear()
            self._pods = [[] for _ in t.names]
            self._grid = np.full((_FIELDS, len(t.names), 1), _NO_POD, np.int64)
            self._sorted = np.zeros(len(t.names), np.bool_)
            return
        for name in self._dirty:
            row = t.index.get(name)
            if row is not None:
                self._sorted[row] = False
        self._dirty.clear()

    def _sort_rows(self, rows: Rows) -> bool:
        """Sort the rows not sorted yet; False if a node is missing from the cluster or the
        matrix would grow past ``_MAX_CELLS``."""
        names = self.table.names
        for row in rows[~self._sorted[rows]].tolist():
            if not self._sort_row(row, names[row]):
                return False
            self._sorted[row] = True
        return True

    def _sort_row(self, row: int, name: str) -> bool:
        info = self.infos.get(name)
        if info is None:
            return False
        assert self._features is not None
        pods = importance_order(info.pods)
        grid = self._grid
        if len(pods) > grid.shape[2]:
            width = max(len(pods), 2 * grid.shape[2])
            if width * grid.shape[1] > _MAX_CELLS:
                return False
            wider = np.full((_FIELDS, grid.shape[1], width), _NO_POD, np.int64)
            wider[:, :, : grid.shape[2]] = grid
            self._grid = grid = wider
        grid[:, row, :] = _NO_POD
        if pods:
            fields = []
            for p in pods:
                r = calculate_resource(p, self._features).resource
                fields.append(
                    (
                        pod_priority(p),
                        pod_start_time(p),
                        1,
                        r.milli_cpu,
                        r.memory,
                        r.ephemeral_storage,
                    )
                )
            grid[:, row, : len(pods)] = np.array(fields, np.int64).T
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
        self._refresh(features)
        priority = pod_priority(pod)
        # Fit's quantities the pod asks for (a pod more is always asked): the room left for
        # each, per node, with every pod of lower priority gone and the nominated pods of at
        # least the pod's priority in — what Fit sees in SelectVictimsOnNode.
        nominated = t._nominated_requests(pod)
        quantities = (
            (1, t.free_pods, nominated[3], "pods"),
            (need.milli_cpu, t.free_cpu, nominated[0], "cpu"),
            (need.memory, t.free_mem, nominated[1], "mem"),
            (need.ephemeral_storage, t.free_eph, nominated[2], "eph"),
        )
        lower_levels = [level for p, level in t._bound.items() if p < priority]
        asked = [q for q, (amount, *_) in enumerate(quantities) if amount > 0]
        room = np.empty((len(asked), len(t.names)), np.int64)
        for r, q in enumerate(asked):
            _, free, taken, attr = quantities[q]
            np.subtract(free, taken, out=room[r])
            for level in lower_levels:
                room[r] += getattr(level, attr)
        needs = np.array([quantities[q][0] for q in asked], np.int64)[:, None]
        fields = np.array(asked, np.intp) + _ONE
        k = num_candidates
        kept: tuple[list[Any], list[Any]] = ([], [])  # PDB-respecting, violating
        counts = [0, 0]
        start = 0
        # Without budgets every node is a PDB-respecting candidate (or the kernel declines):
        # the search stops at the k-th.
        size = k if not pdbs else max(2 * k, _MIN_BATCH)
        while start < len(order):
            stop = min(start + size, len(order))
            rows = np.array(order[start:stop], np.intp)
            if not self._sort_rows(rows):
                return None
            outcome = self._dry_run(rows, room[:, rows], needs, fields, priority, pdbs)
            if outcome is None:
                return None
            if _keep(outcome, k, kept, counts):
                break
            start, size = stop, 2 * size
        chosen = kept[0] + kept[1]
        if len(chosen) == 1 and len(chosen[0][1]) == 1:
            return _Found(chosen, 0)
        keys = [outcome.keys(idx) for outcome, idx in chosen]
        merged = keys[0] if len(keys) == 1 else [np.concatenate(c) for c in zip(*keys, strict=True)]
        return _Found(chosen, _pick(merged))

    def _dry_run(
        self,
        rows: Rows,
        room: I64,
        needs: I64,
        fields: Rows,
        priority: int,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> _Outcome | None:
        """SelectVictimsOnNode for a batch of nodes (``room``: per asked quantity and node,
        what is left with every potential victim gone; ``needs``: what the pod asks of each)."""
        if not _all(room >= needs):
            return None  # the screen's verdict, checked again: the pod fits with all gone
        grid = self._grid[:, rows, :]
        lower = grid[_PRIORITY] < priority  # the potential victims, a suffix of each row
        violating = _pdb_violations(self._pods, rows, lower, pdbs) if pdbs else None
        if violating is None:
            # The reprieve order is importance order: the matrix's own columns.
            taken, valid = grid[fields], lower
            steps = np.logical_or.reduce(lower, axis=0).nonzero()[0]
        else:
            # PDB-violating pods first, then the others, each most important first.
            rank = np.where(lower, np.where(violating, 0, 1), 2)
            order = np.argsort(rank, axis=1, kind="stable")
            at = np.arange(len(rows))[:, None]
            taken, valid = grid[fields[:, None, None], at, order], lower[at, order]
            steps = np.logical_or.reduce(valid, axis=0).nonzero()[0]
        back = np.zeros(valid.shape, np.bool_)
        left = room
        for step in steps.tolist():
            # Fit's test with this pod given back: the pod still allowed, no request short.
            trial = left - taken[:, :, step]
            ok = valid[:, step] & np.logical_and.reduce(trial >= needs, axis=0)
            back[:, step] = ok
            left = np.where(ok, trial, left)
        kept_victims = valid & ~back
        if violating is None:
            victim = kept_victims
        else:
            victim = np.zeros(lower.shape, np.bool_)
            victim[at, order] = kept_victims
        count = np.add.reduce(victim, axis=1, dtype=np.int64)
        if not _all(count):
            return None  # no victim: the reference reports it
        violations = (
            np.add.reduce(victim & violating, axis=1, dtype=np.int64)
            if violating is not None
            else None
        )
        return _Outcome(self, rows, grid, victim, count, violations)


def _pdb_violations(
    pods: list[list[Pod]], rows: Rows, lower: B, pdbs: Sequence[PodDisruptionBudget]
) -> B:
    """Per node and potential victim, whether evicting it (after the more important ones)
    exceeds a budget: a running count per budget along each row.

    Upstream: filterPodsWithPDBViolation (default_preemption.go, v1.35)
    """
    violating = np.zeros(lower.shape, np.bool_)
    where = np.nonzero(lower)
    victims = [
        pods[row][j] for row, j in zip(rows[where[0]].tolist(), where[1].tolist(), strict=True)
    ]
    for pdb, selector in zip(pdbs, pdb_selectors(pdbs), strict=True):
        counted = np.zeros(lower.shape, np.int64)
        counted[where] = [counts_against(pdb, selector, p) for p in victims]
        # Violated once the running count of its pods exceeds what the budget allows
        # (the allowance decremented below zero).
        running = np.cumsum(counted, axis=1)
        violating |= (counted > 0) & (running > pdb.status.disruptions_allowed)
    return violating


class _Outcome:
    """One batch's dry run: per node its victims and PDB violations (None: no budget)."""

    __slots__ = ("count", "grid", "kernel", "rows", "victim", "violations")

    def __init__(
        self, kernel: PreemptionKernel, rows: Rows, grid: I64, victim: B, count: I64,
        violations: I64 | None,
    ) -> None:  # fmt: skip
        self.kernel = kernel
        self.rows = rows
        self.grid = grid
        self.victim = victim
        self.count = count
        self.violations = violations

    def keys(self, idx: Rows) -> list[I64]:
        """pickOneNodeForPreemption's default criteria for the nodes at ``idx``, lower is
        better: PDB violations, the highest victim priority, the sum of shifted priorities,
        the number of victims, the earliest start among the highest-priority victims (negated:
        the latest is best). The first victim has the highest priority and, importance order
        sorting by start within a priority, the earliest start of that priority."""
        victim = self.victim[idx]
        grid = self.grid[:, idx]
        count = self.count[idx]
        at = np.arange(len(idx))
        first = victim.argmax(axis=1)
        priorities = grid[_PRIORITY]
        total = np.add.reduce(np.where(victim, priorities, 0), axis=1) + _PRIORITY_SHIFT * count
        violations = (
            np.zeros(len(at), np.int64) if self.violations is None else self.violations[idx]
        )
        return [violations, priorities[at, first], total, count, -grid[_START, at, first]]

    def candidate(self, i: int) -> Candidate:
        row = int(self.rows[i])
        pods = self.kernel._pods[row]
        chosen = tuple(pods[j] for j in self.victim[i].nonzero()[0].tolist())
        violations = 0 if self.violations is None else int(self.violations[i])
        return Candidate(self.kernel.table.names[row], Victims(chosen, violations))


def _keep(outcome: _Outcome, k: int, kept: tuple[list[Any], list[Any]], counts: list[int]) -> bool:
    """DryRunPreemption's rule over one batch, in visiting order: each kind of candidate kept
    up to ``k``; the search stops after the first candidate at which a PDB-respecting one is
    kept and both kinds together (each capped at ``k``) reach ``k``. True when it stopped.
    ``counts`` are the candidates of each kind found in the batches before."""
    n = len(outcome.rows)
    if outcome.violations is None or not outcome.violations.any():
        # Every candidate respects the budgets: the stop is where they reach what is needed.
        needed = max(k - min(counts[1], k), 1)
        at = needed - counts[0] - 1
        end = min(max(at, 0) + 1, n)
        stopped = at < n
        take = min(max(k - counts[0], 0), end)
        if take:
            kept[0].append((outcome, np.arange(take)))
        counts[0] += end
        return stopped
    bad = outcome.violations > 0
    n_ok = counts[0] + np.cumsum(~bad)
    n_bad = counts[1] + np.cumsum(bad)
    stops = np.flatnonzero((n_ok >= 1) & (np.minimum(n_ok, k) + np.minimum(n_bad, k) >= k))
    end = int(stops[0]) + 1 if len(stops) else n
    for kind, mine in ((0, ~bad[:end]), (1, bad[:end])):
        found = np.flatnonzero(mine)
        room = max(k - counts[kind], 0)
        if room and len(found):
            kept[kind].append((outcome, found[:room]))
        counts[kind] += len(found)
    return bool(len(stops))


def _all(values: npt.NDArray[Any]) -> bool:
    """Whether every value is true (nonzero), without numpy's Python-level method wrapper."""
    return bool(np.logical_and.reduce(values, axis=None))


def _pick(keys: Sequence[I64]) -> int:
    """pickOneNodeForPreemption over per-candidate keys (lower is better), each breaking the
    ties of the ones before: the candidate with the least keys, the first such one (lexsort is
    stable and sorts by its last key first)."""
    return int(np.lexsort(keys[::-1])[0])


class _Found(RankedCandidates):
    """The kept candidates in DryRunPreemption's order (PDB-respecting first), each read out
    of its batch's outcome when asked for."""

    __slots__ = ("_kept", "_len", "best")

    def __init__(self, kept: list[tuple[_Outcome, Rows]], best: int) -> None:
        self._kept = kept
        self._len = sum(len(idx) for _, idx in kept)
        self.best = self[best]

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, i: int) -> Candidate: ...
    @overload
    def __getitem__(self, i: slice) -> list[Candidate]: ...
    def __getitem__(self, i: int | slice) -> Candidate | list[Candidate]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += self._len
        if not 0 <= i < self._len:
            raise IndexError(i)
        for outcome, idx in self._kept:
            if i < len(idx):
                return outcome.candidate(int(idx[i]))
            i -= len(idx)
        raise IndexError(i)  # unreachable: i was in range


__all__ = ["NodeInfos", "NodeTable", "PreemptionKernel"]
