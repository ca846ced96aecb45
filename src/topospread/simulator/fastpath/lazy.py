"""Filter verdicts where some filters run through their reference plugins (a pod's volume
plugins: ``kernels/volumes.py``) only on the nodes the search visits, as the reference cycle
runs them, rather than on every node.

A node's status is its first failing filter's, in the profile's order. The vectorised filters'
verdicts are known on every node: per node, the first of them that fails (``first_pos``) and
its status. A deferred filter matters on a node only when every filter before it passes there:
it runs on the node only then, in order, and where it fails its status is the node's. The
search for feasible nodes visits the nodes in the reference's order and settles every visited
node's status as the reference does: a deferred filter runs on a visited node wherever every
filter before it passes, even if a later vectorised filter rejects the node, since an error
there ends the reference's cycle (an untranslatable in-tree PV in VolumeBinding's Filter). The
statuses of nodes the search did not visit — a failed attempt's diagnosis, which visits every
node — are resolved when asked for (``resolve``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from topospread.simulator.fastpath.vectors import I32, B, Rows

if TYPE_CHECKING:
    from topospread.simulator.fastpath.kernels.base import Attempt, Kernel

UNKNOWN = -1
# The fewest nodes the search asks the deferred filters about at once.
MIN_CHUNK = 32


class LazyVerdicts:
    """One attempt's filter verdicts, the deferred filters' taken node by node on demand."""

    def __init__(self, attempt: Attempt, stages: list[tuple[Kernel, I32 | None]], n: int) -> None:
        """``stages``: the filters that run, in order, each with its status vector, or None
        for a deferred one (``Kernel.defers``)."""
        self.attempt = attempt
        self.stages = stages
        none = len(stages)
        self.first_pos = np.full(n, none, np.int32)
        self.first_status = np.zeros(n, np.int32)
        for k, (_, vec) in enumerate(stages):
            if vec is None:
                continue
            hit = (vec != 0) & (self.first_pos == none)
            self.first_pos[hit] = k
            self.first_status[hit] = vec[hit]
        self.deferred = [k for k, (_, vec) in enumerate(stages) if vec is None]
        self.status = np.full(n, UNKNOWN, np.int32)  # a node's final status, once known

    def override(self, i: int, status: int) -> None:
        """The node's status as the reference filters gave it (nodes holding nominated pods)."""
        self.status[i] = status

    def _run_deferred(self, rows: Rows) -> None:
        """Settle the status of ``rows`` (unknown so far), running each deferred filter on the
        nodes every filter before it passes."""
        pending = rows
        for k in self.deferred:
            need = pending[self.first_pos[pending] > k]
            if not len(need):
                continue
            kernel = self.stages[k][0]
            found = kernel.filter_rows(self.attempt, need)
            if self.attempt.declined:
                return
            failed = found != 0
            self.status[need[failed]] = found[failed]
            pending = pending[self.status[pending] == UNKNOWN]
        self.status[pending] = self.first_status[pending]

    def resolve(self, rows: Rows) -> I32:
        """The statuses of ``rows`` (0: feasible); ``attempt.declined`` where a deferred
        filter errs."""
        unknown = rows[self.status[rows] == UNKNOWN]
        if len(unknown):
            self._run_deferred(unknown)
        out: I32 = self.status[rows]
        return out

    def feasible(self, rows: Rows) -> B:
        """Which of ``rows`` are feasible, each deferred filter run where every filter before
        it passes (as the reference runs them, so that one erring there declines the attempt
        in a run without detail too, not only when a report resolves the visited nodes)."""
        ask = rows[self.status[rows] == UNKNOWN]
        if len(ask):
            self._run_deferred(ask)
        out: B = self.status[rows] == 0
        return out

    def search(self, order: Rows, to_find: int) -> tuple[Rows, int]:
        """The first ``to_find`` feasible nodes in visiting ``order``, and how many nodes the
        search visited (all of them when it finds fewer).

        Upstream: findNodesThatPassFilters (schedule_one.go, v1.35), over the nodes in turn
        """
        n = len(order)
        found: list[Rows] = []
        count = 0
        pos = 0
        while pos < n:
            chunk = order[pos : pos + max(2 * (to_find - count), MIN_CHUNK)]
            ok = self.feasible(chunk)
            if self.attempt.declined:
                return order[:0], n
            hits = np.flatnonzero(ok)
            if count + len(hits) >= to_find:
                last = int(hits[to_find - count - 1])
                found.append(chunk[hits[: to_find - count]])
                return np.concatenate(found), pos + last + 1
            found.append(chunk[hits])
            count += len(hits)
            pos += len(chunk)
        return (np.concatenate(found) if found else order[:0]), n


__all__ = ["LazyVerdicts"]
